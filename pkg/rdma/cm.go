package rdma

// CM is the connection manager side of the stack (librdmacm). (Defined with ping's seam.)
type CM interface{}
