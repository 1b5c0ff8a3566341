package rdma

// PerfCMID is a CM id that can connect a perf endpoint's QP (rdmactl perf
// -R): it moves QP qp of ep through INIT, RTR and RTS with the attributes
// rdma_cm computed for the id's connection, as for a QP the program made
// itself (see CMID.ReadyOwnQP), except the RNR NAK timer the QP gives a
// sender that finds no receive posted: minRNRTimer (the verbs' code;
// rdma_cm's 0 means 655 ms). The cgo stack's ids implement it.
type PerfCMID interface {
	ReadyPerfQP(ep PerfEndpoint, qp int, minRNRTimer uint8) error
}
