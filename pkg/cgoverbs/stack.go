package cgoverbs

import "github.com/rdmactl/rdmactl/pkg/rdma"

// Stack is this machine's libibverbs and librdmacm as the rdma.Stack the
// commands use. Its methods live beside what they wrap: device queries in
// device.go, the verbs resources and the connection manager in theirs.
type Stack struct{}

var _ rdma.Stack = Stack{}
