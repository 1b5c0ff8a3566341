package rdma

// RC is what the RC demo allocates on a device. (Defined with the demo's seam.)
type RC interface{}
