package devinfo

import "github.com/rdmactl/rdmactl/pkg/rdma"

// Source is where device data comes from: the rdma.Stack in the program
// (pkg/cgoverbs), captured data in tests (devinfotest).
type Source = rdma.Verbs
