// Package rdma is rdmactl's one model of RDMA things — devices, ports,
// GIDs and their attributes as libibverbs reports them — and the error
// every call into the RDMA stack returns. It is pure Go: pkg/cgoverbs
// fills these types from libibverbs and librdmacm, tests build them by
// hand, and every command package reads them.
package rdma
