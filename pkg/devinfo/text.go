package devinfo

import (
	"fmt"
	"io"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// Bits of the verbs flag words that ibv_devinfo names.
var deviceCapFlagNames = []flagName{
	{1 << 0, "RESIZE_MAX_WR"}, {1 << 1, "BAD_PKEY_CNTR"}, {1 << 2, "BAD_QKEY_CNTR"}, {1 << 3, "RAW_MULTI"},
	{1 << 4, "AUTO_PATH_MIG"}, {1 << 5, "CHANGE_PHY_PORT"}, {1 << 6, "UD_AV_PORT_ENFORCE"},
	{1 << 7, "CURR_QP_STATE_MOD"}, {1 << 8, "SHUTDOWN_PORT"}, {1 << 9, "INIT_TYPE"},
	{1 << 10, "PORT_ACTIVE_EVENT"}, {1 << 11, "SYS_IMAGE_GUID"}, {1 << 12, "RC_RNR_NAK_GEN"},
	{1 << 13, "SRQ_RESIZE"}, {1 << 14, "N_NOTIFY_CQ"}, {1 << 17, "MEM_WINDOW"}, {1 << 18, "UD_IP_CSUM"},
	{1 << 20, "XRC"}, {1 << 21, "MEM_MGT_EXTENSIONS"}, {1 << 23, "MEM_WINDOW_TYPE_2A"},
	{1 << 24, "MEM_WINDOW_TYPE_2B"}, {1 << 25, "RC_IP_CSUM"}, {1 << 26, "RAW_IP_CSUM"},
	{1 << 29, "MANAGED_FLOW_STEERING"},
}

var odpGeneralNames = []flagName{{1 << 0, "ODP_SUPPORT"}, {1 << 1, "ODP_SUPPORT_IMPLICIT"}}

var odpTransportNames = []flagName{
	{1 << 0, "SUPPORT_SEND"}, {1 << 1, "SUPPORT_RECV"}, {1 << 2, "SUPPORT_WRITE"},
	{1 << 3, "SUPPORT_READ"}, {1 << 4, "SUPPORT_ATOMIC"}, {1 << 5, "SUPPORT_SRQ"},
}

// Only the upper 32 bits of device_cap_flags_ex are listed; the lower half
// repeats device_cap_flags.
var deviceCapFlagExNames = []flagName{{1 << 34, "RAW_SCATTER_FCS"}, {1 << 36, "PCI_WRITE_END_PADDING"}}

// Bits of a supported_qpts word: 1 << IBV_QPT_RAW_PACKET, 1 << IBV_QPT_UD.
var qpTypeNames = []flagName{{1 << 8, "SUPPORT_RAW_PACKET"}, {1 << 4, "SUPPORT_UD"}}

var rawPacketCapNames = []flagName{
	{1 << 0, "C-VLAN stripping offload"}, {1 << 1, "Scatter FCS offload"},
	{1 << 2, "IP csum offload"}, {1 << 3, "Delay drop"},
}

const tmCapRC = 1 << 0

type flagName struct {
	bit  uint64
	name string
}

// textWriter prints with printf's formats into the buffer that Run
// flushes at the end, so there is no write error to handle here.
type textWriter struct{ w io.Writer }

func (t *textWriter) printf(format string, args ...any) { fmt.Fprintf(t.w, format, args...) }

// flags prints the name of each known bit set in v, then, if unknown
// bits are set (only those, as in the C's ~known mask), their hex value.
// width is the C type's bit width, for the mask.
func (t *textWriter) flags(v uint64, table []flagName, unknownLine bool, width uint) {
	var known uint64
	for _, f := range table {
		known |= f.bit
		if v&f.bit != 0 {
			t.printf("\t\t\t\t\t%s\n", f.name)
		}
	}
	mask := ^known
	if width == 32 {
		mask &= 0xffffffff
	}
	if unknownLine && v&mask != 0 {
		t.printf("\t\t\t\t\tUnknown flags: 0x%X\n", v&mask)
	}
}

// writeDeviceText prints one device as print_hca_cap does.
func writeDeviceText(t *textWriter, d *DeviceReport, verbose bool) {
	a := d.Attr
	if a == nil {
		return
	}
	t.printf("hca_id:\t%s\n", d.Name)
	t.printf("\ttransport:\t\t\t%s (%d)\n", a.Transport, int32(a.Transport))
	if a.FWVer != "" {
		t.printf("\tfw_ver:\t\t\t\t%s\n", a.FWVer)
	}
	t.printf("\tnode_guid:\t\t\t%s\n", a.NodeGUID)
	t.printf("\tsys_image_guid:\t\t\t%s\n", a.SysImageGUID)
	t.printf("\tvendor_id:\t\t\t0x%04x\n", a.VendorID)
	t.printf("\tvendor_part_id:\t\t\t%d\n", int32(a.VendorPartID))
	t.printf("\thw_ver:\t\t\t\t0x%X\n", a.HWVer)
	if a.BoardID != "" {
		t.printf("\tboard_id:\t\t\t%s\n", a.BoardID)
	}
	t.printf("\tphys_port_cnt:\t\t\t%d\n", a.PhysPortCnt)
	if verbose {
		writeVerboseDevice(t, a)
	}
	for i := range d.Ports {
		p := &d.Ports[i]
		writePort(t, p, a.Transport, verbose)
		if d.cutOff && i == len(d.Ports)-1 {
			return
		}
		t.printf("\n")
	}
}

func writeVerboseDevice(t *textWriter, a *rdma.DeviceAttr) {
	t.printf("\tmax_mr_size:\t\t\t0x%x\n", a.MaxMRSize)
	t.printf("\tpage_size_cap:\t\t\t0x%x\n", a.PageSizeCap)
	t.printf("\tmax_qp:\t\t\t\t%d\n", a.MaxQP)
	t.printf("\tmax_qp_wr:\t\t\t%d\n", a.MaxQPWR)
	t.printf("\tdevice_cap_flags:\t\t0x%08x\n", a.DeviceCapFlags)
	t.flags(uint64(a.DeviceCapFlags), deviceCapFlagNames, true, 32)
	t.printf("\tmax_sge:\t\t\t%d\n", a.MaxSGE)
	t.printf("\tmax_sge_rd:\t\t\t%d\n", a.MaxSGERd)
	t.printf("\tmax_cq:\t\t\t\t%d\n", a.MaxCQ)
	t.printf("\tmax_cqe:\t\t\t%d\n", a.MaxCQE)
	t.printf("\tmax_mr:\t\t\t\t%d\n", a.MaxMR)
	t.printf("\tmax_pd:\t\t\t\t%d\n", a.MaxPD)
	t.printf("\tmax_qp_rd_atom:\t\t\t%d\n", a.MaxQPRdAtom)
	t.printf("\tmax_ee_rd_atom:\t\t\t%d\n", a.MaxEERdAtom)
	t.printf("\tmax_res_rd_atom:\t\t%d\n", a.MaxResRdAtom)
	t.printf("\tmax_qp_init_rd_atom:\t\t%d\n", a.MaxQPInitRdAtom)
	t.printf("\tmax_ee_init_rd_atom:\t\t%d\n", a.MaxEEInitRdAtom)
	t.printf("\tatomic_cap:\t\t\t%s (%d)\n", a.AtomicCap, int32(a.AtomicCap))
	t.printf("\tmax_ee:\t\t\t\t%d\n", a.MaxEE)
	t.printf("\tmax_rdd:\t\t\t%d\n", a.MaxRDD)
	t.printf("\tmax_mw:\t\t\t\t%d\n", a.MaxMW)
	t.printf("\tmax_raw_ipv6_qp:\t\t%d\n", a.MaxRawIPv6QP)
	t.printf("\tmax_raw_ethy_qp:\t\t%d\n", a.MaxRawEthyQP)
	t.printf("\tmax_mcast_grp:\t\t\t%d\n", a.MaxMcastGrp)
	t.printf("\tmax_mcast_qp_attach:\t\t%d\n", a.MaxMcastQPAttach)
	t.printf("\tmax_total_mcast_qp_attach:\t%d\n", a.MaxTotalMcastQPAttach)
	t.printf("\tmax_ah:\t\t\t\t%d\n", a.MaxAH)
	t.printf("\tmax_fmr:\t\t\t%d\n", a.MaxFMR)
	if a.MaxFMR != 0 {
		t.printf("\tmax_map_per_fmr:\t\t%d\n", a.MaxMapPerFMR)
	}
	t.printf("\tmax_srq:\t\t\t%d\n", a.MaxSRQ)
	if a.MaxSRQ != 0 {
		t.printf("\tmax_srq_wr:\t\t\t%d\n", a.MaxSRQWR)
		t.printf("\tmax_srq_sge:\t\t\t%d\n", a.MaxSRQSGE)
	}
	t.printf("\tmax_pkeys:\t\t\t%d\n", a.MaxPKeys)
	t.printf("\tlocal_ca_ack_delay:\t\t%d\n", a.LocalCAAckDelay)

	t.printf("\tgeneral_odp_caps:\n")
	t.flags(a.ODPCaps.GeneralCaps, odpGeneralNames, true, 64)
	for _, c := range []struct {
		name string
		caps uint32
	}{{"rc", a.ODPCaps.RC}, {"uc", a.ODPCaps.UC}, {"ud", a.ODPCaps.UD}, {"xrc", a.XRCODPCaps}} {
		t.printf("\t%s_odp_caps:\n", c.name)
		if c.caps == 0 {
			t.printf("\t\t\t\t\tNO SUPPORT\n")
		} else {
			t.flags(uint64(c.caps), odpTransportNames, true, 32)
		}
	}

	if a.CompletionTimestampMask != 0 {
		t.printf("\tcompletion timestamp_mask:\t\t\t0x%016x\n", a.CompletionTimestampMask)
	} else {
		t.printf("\tcompletion_timestamp_mask not supported\n")
	}
	if a.HCACoreClock != 0 {
		t.printf("\thca_core_clock:\t\t\t%dkHZ\n", a.HCACoreClock)
	} else {
		t.printf("\tcore clock not supported\n")
	}
	if a.RawPacketCaps != 0 {
		t.printf("\traw packet caps:\n")
		t.flags(uint64(a.RawPacketCaps), rawPacketCapNames, false, 32)
	}

	t.printf("\tdevice_cap_flags_ex:\t\t0x%X\n", a.DeviceCapFlagsEx)
	t.flags(a.DeviceCapFlagsEx&0xffffffff00000000, deviceCapFlagExNames, true, 64)

	t.printf("\ttso_caps:\n")
	// max_tso is unsigned but printed with %d.
	t.printf("\t\tmax_tso:\t\t\t%d\n", int32(a.TSOCaps.MaxTSO))
	if a.TSOCaps.MaxTSO != 0 {
		t.printf("\t\tsupported_qp:\n")
		t.flags(uint64(a.TSOCaps.SupportedQPTs), qpTypeNames, true, 32)
	}

	r := &a.RSSCaps
	t.printf("\trss_caps:\n")
	t.printf("\t\tmax_rwq_indirection_tables:\t\t\t%d\n", r.MaxRWQIndirectionTables)
	t.printf("\t\tmax_rwq_indirection_table_size:\t\t\t%d\n", r.MaxRWQIndirectionTableSize)
	t.printf("\t\trx_hash_function:\t\t\t\t0x%x\n", r.RxHashFunction)
	t.printf("\t\trx_hash_fields_mask:\t\t\t\t0x%X\n", r.RxHashFieldsMask)
	if r.SupportedQPTs != 0 {
		t.printf("\t\tsupported_qp:\n")
		t.flags(uint64(r.SupportedQPTs), qpTypeNames, true, 32)
	}
	t.printf("\tmax_wq_type_rq:\t\t\t%d\n", a.MaxWQTypeRQ)

	pp := &a.PacketPacingCaps
	t.printf("\tpacket_pacing_caps:\n")
	t.printf("\t\tqp_rate_limit_min:\t%dkbps\n", pp.QPRateLimitMin)
	t.printf("\t\tqp_rate_limit_max:\t%dkbps\n", pp.QPRateLimitMax)
	if pp.QPRateLimitMax != 0 {
		t.printf("\t\tsupported_qp:\n")
		t.flags(uint64(pp.SupportedQPTs), qpTypeNames, true, 32)
	}

	tm := &a.TMCaps
	if tm.MaxNumTags != 0 {
		t.printf("\tmax_rndv_hdr_size:\t\t%d\n", tm.MaxRndvHdrSize)
		t.printf("\tmax_num_tags:\t\t\t%d\n", tm.MaxNumTags)
		t.printf("\tmax_ops:\t\t\t%d\n", tm.MaxOps)
		t.printf("\tmax_sge:\t\t\t%d\n", tm.MaxSGE)
		t.printf("\tflags:\n")
		if tm.Flags&tmCapRC != 0 {
			t.printf("\t\t\t\t\tIBV_TM_CAP_RC\n")
		}
	} else {
		t.printf("\ttag matching not supported\n")
	}

	if cq := &a.CQModCaps; cq.MaxCQCount != 0 && cq.MaxCQPeriod != 0 {
		t.printf("\n\tcq moderation caps:\n")
		t.printf("\t\tmax_cq_count:\t%d\n", cq.MaxCQCount)
		t.printf("\t\tmax_cq_period:\t%d us\n\n", cq.MaxCQPeriod)
	}
	if a.MaxDMSize != 0 {
		t.printf("\tmaximum available device memory:\t%dBytes\n\n", a.MaxDMSize)
	}
	t.printf("\tnum_comp_vectors:\t\t%d\n", a.NumCompVectors)
}

func writePort(t *textWriter, p *PortReport, transport rdma.Transport, verbose bool) {
	a := &p.Attr
	t.printf("\t\tport:\t%d\n", p.Port)
	t.printf("\t\t\tstate:\t\t\t%s (%d)\n", a.State, a.State)
	t.printf("\t\t\tmax_mtu:\t\t%s (%d)\n", a.MaxMTU, a.MaxMTU)
	t.printf("\t\t\tactive_mtu:\t\t%s (%d)\n", a.ActiveMTU, a.ActiveMTU)
	t.printf("\t\t\tsm_lid:\t\t\t%d\n", a.SMLID)
	t.printf("\t\t\tport_lid:\t\t%d\n", a.LID)
	t.printf("\t\t\tport_lmc:\t\t0x%02x\n", a.LMC)
	t.printf("\t\t\tlink_layer:\t\t%s\n", a.LinkLayer)
	if !verbose {
		return
	}
	t.printf("\t\t\tmax_msg_sz:\t\t0x%x\n", a.MaxMsgSz)
	t.printf("\t\t\tport_cap_flags:\t\t0x%08x\n", a.PortCapFlags)
	t.printf("\t\t\tport_cap_flags2:\t0x%04x\n", a.PortCapFlags2)
	t.printf("\t\t\tmax_vl_num:\t\t%s (%d)\n", a.MaxVLNum, a.MaxVLNum)
	t.printf("\t\t\tbad_pkey_cntr:\t\t0x%x\n", a.BadPKeyCntr)
	t.printf("\t\t\tqkey_viol_cntr:\t\t0x%x\n", a.QKeyViolCntr)
	t.printf("\t\t\tsm_sl:\t\t\t%d\n", a.SMSL)
	t.printf("\t\t\tpkey_tbl_len:\t\t%d\n", a.PKeyTblLen)
	t.printf("\t\t\tgid_tbl_len:\t\t%d\n", a.GIDTblLen)
	t.printf("\t\t\tsubnet_timeout:\t\t%d\n", a.SubnetTimeout)
	t.printf("\t\t\tinit_type_reply:\t%d\n", a.InitTypeReply)
	t.printf("\t\t\tactive_width:\t\t%s (%d)\n", a.ActiveWidth, a.ActiveWidth)
	t.printf("\t\t\tactive_speed:\t\t%s (%d)\n", a.ActiveSpeed, a.ActiveSpeed)
	if transport == rdma.TransportIB {
		t.printf("\t\t\tphys_state:\t\t%s (%d)\n", a.PhysState, a.PhysState)
	}
	for _, g := range p.GIDs {
		writeGID(t, g, a.LinkLayer)
	}
}

// writeGID prints one GID as print_formated_gid does. ibv_devinfo skips
// GIDs whose interface ID (the low 64 bits) is zero.
func writeGID(t *textWriter, g rdma.GIDEntry, ll rdma.LinkLayer) {
	if [8]byte(g.GID[8:]) == [8]byte{} {
		return
	}
	// ibv_query_gid_type folds IB into RoCE v1: both print as groups.
	v2 := g.Type == rdma.GIDTypeRoCEv2
	suffix := ""
	if ll == rdma.LinkLayerEthernet {
		suffix = ", RoCE v1"
		if v2 {
			suffix = ", RoCE v2"
		}
	}
	if v2 {
		t.printf("\t\t\tGID[%3d]:\t\t%s%s\n", g.Index, g.GID, suffix)
	} else {
		t.printf("\t\t\tGID[%3d]:\t\t%s%s\n", g.Index, g.GID.Groups(), suffix)
	}
}
