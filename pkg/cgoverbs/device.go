package cgoverbs

/*
#include <stdlib.h>
#include <infiniband/verbs.h>
#include "cverrno.h"
#include "device.h"
*/
import "C"

import (
	"cmp"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"unsafe"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// DeviceList lists the devices (ibv_get_device_list).
func (Stack) DeviceList() ([]rdma.DeviceEntry, error) {
	devs, err := Devices()
	if err != nil {
		return nil, err
	}
	out := make([]rdma.DeviceEntry, len(devs))
	for i, d := range devs {
		out[i] = rdma.DeviceEntry{Name: d.Name, NodeGUID: rdma.GUID(d.NodeGUID)}
	}
	return out, nil
}

// Open opens the named device.
func (Stack) Open(name string) (rdma.Device, error) {
	ctx, err := Open(name)
	if err != nil {
		return nil, err
	}
	return ctx, nil
}

// QueryDevice is ibv_query_device_ex, plus the transport, board_id and
// completion vector count that ibv_devinfo shows with it.
func (c *Context) QueryDevice() (rdma.DeviceAttr, error) {
	var a C.struct_ibv_device_attr_ex
	if err := callErr("ibv_query_device_ex", C.cv_neg(C.ibv_query_device_ex(c.c, nil, &a))); err != nil {
		return rdma.DeviceAttr{}, err
	}
	o := &a.orig_attr
	return rdma.DeviceAttr{
		Transport:      rdma.Transport(c.c.device.transport_type),
		BoardID:        c.boardID(),
		NumCompVectors: int32(c.c.num_comp_vectors),

		FWVer:                 C.GoString(&o.fw_ver[0]),
		NodeGUID:              rdma.GUID(be64toh(uint64(o.node_guid))),
		SysImageGUID:          rdma.GUID(be64toh(uint64(o.sys_image_guid))),
		MaxMRSize:             uint64(o.max_mr_size),
		PageSizeCap:           uint64(o.page_size_cap),
		VendorID:              uint32(o.vendor_id),
		VendorPartID:          uint32(o.vendor_part_id),
		HWVer:                 uint32(o.hw_ver),
		MaxQP:                 int32(o.max_qp),
		MaxQPWR:               int32(o.max_qp_wr),
		DeviceCapFlags:        uint32(o.device_cap_flags),
		MaxSGE:                int32(o.max_sge),
		MaxSGERd:              int32(o.max_sge_rd),
		MaxCQ:                 int32(o.max_cq),
		MaxCQE:                int32(o.max_cqe),
		MaxMR:                 int32(o.max_mr),
		MaxPD:                 int32(o.max_pd),
		MaxQPRdAtom:           int32(o.max_qp_rd_atom),
		MaxEERdAtom:           int32(o.max_ee_rd_atom),
		MaxResRdAtom:          int32(o.max_res_rd_atom),
		MaxQPInitRdAtom:       int32(o.max_qp_init_rd_atom),
		MaxEEInitRdAtom:       int32(o.max_ee_init_rd_atom),
		AtomicCap:             rdma.AtomicCap(o.atomic_cap),
		MaxEE:                 int32(o.max_ee),
		MaxRDD:                int32(o.max_rdd),
		MaxMW:                 int32(o.max_mw),
		MaxRawIPv6QP:          int32(o.max_raw_ipv6_qp),
		MaxRawEthyQP:          int32(o.max_raw_ethy_qp),
		MaxMcastGrp:           int32(o.max_mcast_grp),
		MaxMcastQPAttach:      int32(o.max_mcast_qp_attach),
		MaxTotalMcastQPAttach: int32(o.max_total_mcast_qp_attach),
		MaxAH:                 int32(o.max_ah),
		MaxFMR:                int32(o.max_fmr),
		MaxMapPerFMR:          int32(o.max_map_per_fmr),
		MaxSRQ:                int32(o.max_srq),
		MaxSRQWR:              int32(o.max_srq_wr),
		MaxSRQSGE:             int32(o.max_srq_sge),
		MaxPKeys:              uint16(o.max_pkeys),
		LocalCAAckDelay:       uint8(o.local_ca_ack_delay),
		PhysPortCnt:           uint8(o.phys_port_cnt),

		ODPCaps: rdma.ODPCaps{
			GeneralCaps: uint64(a.odp_caps.general_caps),
			RC:          uint32(a.odp_caps.per_transport_caps.rc_odp_caps),
			UC:          uint32(a.odp_caps.per_transport_caps.uc_odp_caps),
			UD:          uint32(a.odp_caps.per_transport_caps.ud_odp_caps),
		},
		XRCODPCaps:              uint32(a.xrc_odp_caps),
		CompletionTimestampMask: uint64(a.completion_timestamp_mask),
		HCACoreClock:            uint64(a.hca_core_clock),
		DeviceCapFlagsEx:        uint64(a.device_cap_flags_ex),
		TSOCaps:                 rdma.TSOCaps{MaxTSO: uint32(a.tso_caps.max_tso), SupportedQPTs: uint32(a.tso_caps.supported_qpts)},
		RSSCaps: rdma.RSSCaps{
			SupportedQPTs:              uint32(a.rss_caps.supported_qpts),
			MaxRWQIndirectionTables:    uint32(a.rss_caps.max_rwq_indirection_tables),
			MaxRWQIndirectionTableSize: uint32(a.rss_caps.max_rwq_indirection_table_size),
			RxHashFieldsMask:           uint64(a.rss_caps.rx_hash_fields_mask),
			RxHashFunction:             uint8(a.rss_caps.rx_hash_function),
		},
		MaxWQTypeRQ: uint32(a.max_wq_type_rq),
		PacketPacingCaps: rdma.PacketPacingCaps{
			QPRateLimitMin: uint32(a.packet_pacing_caps.qp_rate_limit_min),
			QPRateLimitMax: uint32(a.packet_pacing_caps.qp_rate_limit_max),
			SupportedQPTs:  uint32(a.packet_pacing_caps.supported_qpts),
		},
		RawPacketCaps: uint32(a.raw_packet_caps),
		TMCaps: rdma.TMCaps{
			MaxRndvHdrSize: uint32(a.tm_caps.max_rndv_hdr_size),
			MaxNumTags:     uint32(a.tm_caps.max_num_tags),
			Flags:          uint32(a.tm_caps.flags),
			MaxOps:         uint32(a.tm_caps.max_ops),
			MaxSGE:         uint32(a.tm_caps.max_sge),
		},
		CQModCaps: rdma.CQModerationCaps{
			MaxCQCount:  uint16(a.cq_mod_caps.max_cq_count),
			MaxCQPeriod: uint16(a.cq_mod_caps.max_cq_period),
		},
		MaxDMSize: uint64(a.max_dm_size),
		PCIAtomicCaps: rdma.PCIAtomicCaps{
			FetchAdd:    uint16(a.pci_atomic_caps.fetch_add),
			Swap:        uint16(a.pci_atomic_caps.swap),
			CompareSwap: uint16(a.pci_atomic_caps.compare_swap),
		},
		PhysPortCntEx: uint32(a.phys_port_cnt_ex),
	}, nil
}

// boardID reads the device's sysfs board_id the way libibverbs'
// ibv_read_sysfs_file does (at most 256 bytes, one trailing newline
// dropped); "" when there is none, as on rxe.
func (c *Context) boardID() string {
	const max = 256
	f, err := os.Open(filepath.Join(C.GoString(&c.c.device.ibdev_path[0]), "board_id"))
	if err != nil {
		return ""
	}
	defer f.Close()
	buf := make([]byte, max)
	n, _ := f.Read(buf)
	buf = buf[:n]
	switch {
	case n > 0 && buf[n-1] == '\n':
		buf = buf[:n-1]
	case n == max:
		return "" // libibverbs refuses a value it would have to cut
	}
	if i := indexNUL(buf); i >= 0 {
		buf = buf[:i] // printf's %s stops there
	}
	return string(buf)
}

func indexNUL(b []byte) int {
	for i, x := range b {
		if x == 0 {
			return i
		}
	}
	return -1
}

// QueryPort is ibv_query_port; its failure wraps the errno it returned.
func (c *Context) QueryPort(port uint8) (rdma.PortAttr, error) {
	var a C.struct_ibv_port_attr
	if err := callErr(fmt.Sprintf("ibv_query_port(%d)", port), C.rdmactl_query_port(c.c, C.uint8_t(port), &a)); err != nil {
		return rdma.PortAttr{}, err
	}
	return rdma.PortAttr{
		State:         rdma.PortState(a.state),
		MaxMTU:        rdma.MTU(a.max_mtu),
		ActiveMTU:     rdma.MTU(a.active_mtu),
		GIDTblLen:     int32(a.gid_tbl_len),
		PortCapFlags:  uint32(a.port_cap_flags),
		MaxMsgSz:      uint32(a.max_msg_sz),
		BadPKeyCntr:   uint32(a.bad_pkey_cntr),
		QKeyViolCntr:  uint32(a.qkey_viol_cntr),
		PKeyTblLen:    uint16(a.pkey_tbl_len),
		LID:           uint16(a.lid),
		SMLID:         uint16(a.sm_lid),
		LMC:           uint8(a.lmc),
		MaxVLNum:      rdma.VLCount(a.max_vl_num),
		SMSL:          uint8(a.sm_sl),
		SubnetTimeout: uint8(a.subnet_timeout),
		InitTypeReply: uint8(a.init_type_reply),
		ActiveWidth:   rdma.Width(a.active_width),
		ActiveSpeed:   rdma.Speed(a.active_speed),
		PhysState:     rdma.PhysState(a.phys_state),
		LinkLayer:     rdma.LinkLayer(a.link_layer),
		Flags:         uint8(a.flags),
		PortCapFlags2: uint16(a.port_cap_flags2),
	}, nil
}

// QueryGIDEntry is ibv_query_gid_ex: the GID at index of port with its
// type and netdev; rdma.ErrNoGID when that slot is empty.
func (c *Context) QueryGIDEntry(port uint8, index uint32) (rdma.GIDEntry, error) {
	var e C.struct_ibv_gid_entry
	rc := C.rdmactl_query_gid_ex(c.c, C.uint32_t(port), C.uint32_t(index), &e)
	switch {
	case rc == -C.ENODATA:
		return rdma.GIDEntry{}, rdma.ErrNoGID
	case rc != 0:
		return rdma.GIDEntry{}, callErr(fmt.Sprintf("ibv_query_gid_ex(port %d, index %d)", port, index), rc)
	}
	return gidEntry(&e, map[uint32]string{}), nil
}

// ReadGIDTable is ibv_query_gid_table for one port: its populated
// entries (at most tblLen) in index order.
func (c *Context) ReadGIDTable(port uint8, tblLen int32) ([]rdma.GIDEntry, error) {
	if tblLen <= 0 {
		return []rdma.GIDEntry{}, nil
	}
	buf := (*C.struct_ibv_gid_entry)(C.calloc(C.size_t(tblLen), C.size_t(unsafe.Sizeof(C.struct_ibv_gid_entry{}))))
	if buf == nil {
		return nil, rdma.Errorf("ibv_query_gid_table", syscall.ENOMEM)
	}
	defer C.free(unsafe.Pointer(buf))
	n := C.rdmactl_gid_table(c.c, C.uint8_t(port), buf, C.size_t(tblLen))
	if n < 0 {
		return nil, callErr("ibv_query_gid_table", C.int(n))
	}
	raw := unsafe.Slice(buf, int(n))
	out := make([]rdma.GIDEntry, len(raw))
	names := map[uint32]string{}
	for i := range raw {
		out[i] = gidEntry(&raw[i], names)
	}
	slices.SortFunc(out, func(a, b rdma.GIDEntry) int { return cmp.Compare(a.Index, b.Index) })
	return out, nil
}

// gidEntry converts one ibv_gid_entry, naming its netdev; names caches
// the names already looked up (each lookup dumps the links over netlink).
func gidEntry(e *C.struct_ibv_gid_entry, names map[uint32]string) rdma.GIDEntry {
	entry := rdma.GIDEntry{
		Index: uint32(e.gid_index),
		Type:  rdma.GIDType(e.gid_type),
		GID:   *(*rdma.GID)(unsafe.Pointer(&e.gid)),
	}
	if ix := uint32(e.ndev_ifindex); ix != 0 {
		name, ok := names[ix]
		if !ok {
			name = fmt.Sprintf("ifindex %d", ix)
			if ifc, err := net.InterfaceByIndex(int(ix)); err == nil {
				name = ifc.Name
			}
			names[ix] = name
		}
		entry.Netdev = name
	}
	return entry
}
