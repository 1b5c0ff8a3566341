package rdma

import (
	"fmt"
	"strconv"
	"strings"
)

// DeviceEntry is one device as ibv_get_device_list reports it.
type DeviceEntry struct {
	Name     string `json:"device"`
	NodeGUID GUID   `json:"node_guid"`
}

// DeviceAttr is struct ibv_device_attr_ex plus the few facts ibv_devinfo
// takes from struct ibv_device and struct ibv_context. Integer types follow
// the C fields so that formatting reproduces printf's reading of them.
type DeviceAttr struct {
	Transport      Transport `json:"transport"`
	BoardID        string    `json:"board_id,omitempty"`
	NumCompVectors int32     `json:"num_comp_vectors"`

	FWVer                 string    `json:"fw_ver"`
	NodeGUID              GUID      `json:"node_guid"`
	SysImageGUID          GUID      `json:"sys_image_guid"`
	MaxMRSize             uint64    `json:"max_mr_size"`
	PageSizeCap           uint64    `json:"page_size_cap"`
	VendorID              uint32    `json:"vendor_id"`
	VendorPartID          uint32    `json:"vendor_part_id"`
	HWVer                 uint32    `json:"hw_ver"`
	MaxQP                 int32     `json:"max_qp"`
	MaxQPWR               int32     `json:"max_qp_wr"`
	DeviceCapFlags        uint32    `json:"device_cap_flags"`
	MaxSGE                int32     `json:"max_sge"`
	MaxSGERd              int32     `json:"max_sge_rd"`
	MaxCQ                 int32     `json:"max_cq"`
	MaxCQE                int32     `json:"max_cqe"`
	MaxMR                 int32     `json:"max_mr"`
	MaxPD                 int32     `json:"max_pd"`
	MaxQPRdAtom           int32     `json:"max_qp_rd_atom"`
	MaxEERdAtom           int32     `json:"max_ee_rd_atom"`
	MaxResRdAtom          int32     `json:"max_res_rd_atom"`
	MaxQPInitRdAtom       int32     `json:"max_qp_init_rd_atom"`
	MaxEEInitRdAtom       int32     `json:"max_ee_init_rd_atom"`
	AtomicCap             AtomicCap `json:"atomic_cap"`
	MaxEE                 int32     `json:"max_ee"`
	MaxRDD                int32     `json:"max_rdd"`
	MaxMW                 int32     `json:"max_mw"`
	MaxRawIPv6QP          int32     `json:"max_raw_ipv6_qp"`
	MaxRawEthyQP          int32     `json:"max_raw_ethy_qp"`
	MaxMcastGrp           int32     `json:"max_mcast_grp"`
	MaxMcastQPAttach      int32     `json:"max_mcast_qp_attach"`
	MaxTotalMcastQPAttach int32     `json:"max_total_mcast_qp_attach"`
	MaxAH                 int32     `json:"max_ah"`
	MaxFMR                int32     `json:"max_fmr"`
	MaxMapPerFMR          int32     `json:"max_map_per_fmr"`
	MaxSRQ                int32     `json:"max_srq"`
	MaxSRQWR              int32     `json:"max_srq_wr"`
	MaxSRQSGE             int32     `json:"max_srq_sge"`
	MaxPKeys              uint16    `json:"max_pkeys"`
	LocalCAAckDelay       uint8     `json:"local_ca_ack_delay"`
	PhysPortCnt           uint8     `json:"phys_port_cnt"`

	ODPCaps                 ODPCaps          `json:"odp_caps"`
	XRCODPCaps              uint32           `json:"xrc_odp_caps"`
	CompletionTimestampMask uint64           `json:"completion_timestamp_mask"`
	HCACoreClock            uint64           `json:"hca_core_clock"`
	DeviceCapFlagsEx        uint64           `json:"device_cap_flags_ex"`
	TSOCaps                 TSOCaps          `json:"tso_caps"`
	RSSCaps                 RSSCaps          `json:"rss_caps"`
	MaxWQTypeRQ             uint32           `json:"max_wq_type_rq"`
	PacketPacingCaps        PacketPacingCaps `json:"packet_pacing_caps"`
	RawPacketCaps           uint32           `json:"raw_packet_caps"`
	TMCaps                  TMCaps           `json:"tm_caps"`
	CQModCaps               CQModerationCaps `json:"cq_mod_caps"`
	MaxDMSize               uint64           `json:"max_dm_size"`
	PCIAtomicCaps           PCIAtomicCaps    `json:"pci_atomic_caps"`
	PhysPortCntEx           uint32           `json:"phys_port_cnt_ex"`
}

// ODPCaps is struct ibv_odp_caps.
type ODPCaps struct {
	GeneralCaps uint64 `json:"general_caps"`
	RC          uint32 `json:"rc_odp_caps"`
	UC          uint32 `json:"uc_odp_caps"`
	UD          uint32 `json:"ud_odp_caps"`
}

// TSOCaps is struct ibv_tso_caps.
type TSOCaps struct {
	MaxTSO        uint32 `json:"max_tso"`
	SupportedQPTs uint32 `json:"supported_qpts"`
}

// RSSCaps is struct ibv_rss_caps.
type RSSCaps struct {
	SupportedQPTs              uint32 `json:"supported_qpts"`
	MaxRWQIndirectionTables    uint32 `json:"max_rwq_indirection_tables"`
	MaxRWQIndirectionTableSize uint32 `json:"max_rwq_indirection_table_size"`
	RxHashFieldsMask           uint64 `json:"rx_hash_fields_mask"`
	RxHashFunction             uint8  `json:"rx_hash_function"`
}

// PacketPacingCaps is struct ibv_packet_pacing_caps (rates in kbps).
type PacketPacingCaps struct {
	QPRateLimitMin uint32 `json:"qp_rate_limit_min"`
	QPRateLimitMax uint32 `json:"qp_rate_limit_max"`
	SupportedQPTs  uint32 `json:"supported_qpts"`
}

// TMCaps is struct ibv_tm_caps (tag matching).
type TMCaps struct {
	MaxRndvHdrSize uint32 `json:"max_rndv_hdr_size"`
	MaxNumTags     uint32 `json:"max_num_tags"`
	Flags          uint32 `json:"flags"`
	MaxOps         uint32 `json:"max_ops"`
	MaxSGE         uint32 `json:"max_sge"`
}

// CQModerationCaps is struct ibv_cq_moderation_caps.
type CQModerationCaps struct {
	MaxCQCount  uint16 `json:"max_cq_count"`
	MaxCQPeriod uint16 `json:"max_cq_period"`
}

// PCIAtomicCaps is struct ibv_pci_atomic_caps.
type PCIAtomicCaps struct {
	FetchAdd    uint16 `json:"fetch_add"`
	Swap        uint16 `json:"swap"`
	CompareSwap uint16 `json:"compare_swap"`
}

// PortAttr is struct ibv_port_attr.
type PortAttr struct {
	State         PortState `json:"state"`
	MaxMTU        MTU       `json:"max_mtu"`
	ActiveMTU     MTU       `json:"active_mtu"`
	GIDTblLen     int32     `json:"gid_tbl_len"`
	PortCapFlags  uint32    `json:"port_cap_flags"`
	MaxMsgSz      uint32    `json:"max_msg_sz"`
	BadPKeyCntr   uint32    `json:"bad_pkey_cntr"`
	QKeyViolCntr  uint32    `json:"qkey_viol_cntr"`
	PKeyTblLen    uint16    `json:"pkey_tbl_len"`
	LID           uint16    `json:"lid"`
	SMLID         uint16    `json:"sm_lid"`
	LMC           uint8     `json:"lmc"`
	MaxVLNum      VLCount   `json:"max_vl_num"`
	SMSL          uint8     `json:"sm_sl"`
	SubnetTimeout uint8     `json:"subnet_timeout"`
	InitTypeReply uint8     `json:"init_type_reply"`
	ActiveWidth   Width     `json:"active_width"`
	ActiveSpeed   Speed     `json:"active_speed"`
	PhysState     PhysState `json:"physical_state"`
	LinkLayer     LinkLayer `json:"link_layer"`
	Flags         uint8     `json:"flags"`
	PortCapFlags2 uint16    `json:"port_cap_flags2"`
}

// GUID is a node or system image GUID in host order.
type GUID uint64

// String is ibv_devinfo's form, four groups of four hex digits.
func (g GUID) String() string {
	return fmt.Sprintf("%04x:%04x:%04x:%04x", uint16(g>>48), uint16(g>>32), uint16(g>>16), uint16(g))
}

// MarshalText writes the GUID as String does.
func (g GUID) MarshalText() ([]byte, error) { return []byte(g.String()), nil }

// UnmarshalText reads the form String writes.
func (g *GUID) UnmarshalText(b []byte) error {
	groups := strings.Split(string(b), ":")
	if len(groups) != 4 {
		return fmt.Errorf("GUID %q: want four groups of hex digits", b)
	}
	var v uint64
	for _, s := range groups {
		n, err := strconv.ParseUint(s, 16, 16)
		if err != nil {
			return fmt.Errorf("GUID %q: %w", b, err)
		}
		v = v<<16 | n
	}
	*g = GUID(v)
	return nil
}
