package rdma

// QPType is enum ibv_qp_type: the transport service of a queue pair.
type QPType uint32

// The QP types the tools use.
const (
	QPTypeRC QPType = 2
	QPTypeUC QPType = 3
	QPTypeUD QPType = 4
)

func (t QPType) String() string {
	switch t {
	case QPTypeRC:
		return "RC"
	case QPTypeUC:
		return "UC"
	case QPTypeUD:
		return "UD"
	}
	return "unknown QP type"
}

// AHAttr addresses a UD peer (struct ibv_ah_attr): by LID on InfiniBand,
// by GID (GRH) on RoCE.
type AHAttr struct {
	DLID uint16
	SL   uint8
	Port uint8
	GRH  *GRH // nil: LID routing only
}

// AH is an address handle: where a UD send goes (struct ibv_ah).
type AH interface {
	Close() error
}

// UDDest is a UD send's destination: the peer's address handle, QP
// number and Q_Key.
type UDDest struct {
	AH   AH
	QPN  uint32
	QKey uint32
}
