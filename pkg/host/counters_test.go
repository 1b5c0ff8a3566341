package host

import (
	"errors"
	"io/fs"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/vishvananda/netlink/nl"
)

func TestReadSysfsCounters(t *testing.T) {
	ports, err := ReadSysfsCounters(fixtureTree(t, "sysfs-counters.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ports) != 2 {
		t.Fatalf("ports %+v", ports)
	}
	mlx, rxe := ports[0], ports[1]
	if mlx.Device != "mlx5_0" || mlx.Port != 1 || rxe.Device != "rxe0" || rxe.Port != 1 {
		t.Fatalf("ports %+v %+v", mlx, rxe)
	}
	wantPMA := []Counter{{"port_rcv_packets", 4242}, {"port_xmit_data", 123456789}, {"symbol_error", 0}}
	if !reflect.DeepEqual(mlx.PMA, wantPMA) {
		t.Errorf("mlx5_0 counters/ %+v, want %+v (an unreadable value left out)", mlx.PMA, wantPMA)
	}
	if want := []Counter{{"local_ack_timeout_err", 7}, {"out_of_buffer", 3}}; !reflect.DeepEqual(mlx.HW, want) {
		t.Errorf("mlx5_0 hw_counters %+v, want %+v", mlx.HW, want)
	}
	if len(rxe.HW) != 15 || rxe.PMA != nil {
		t.Fatalf("rxe0: %d hw counters (want 15, lifespan is no counter), counters/ %+v", len(rxe.HW), rxe.PMA)
	}
	byName := map[string]uint64{}
	for _, c := range rxe.HW {
		byName[c.Name] = c.Value
	}
	if byName["completer_retry_err"] != 28 || byName["duplicate_request"] != 41 || byName["sent_pkts"] != 1204 {
		t.Errorf("rxe0 hw counters %+v", rxe.HW)
	}
	if _, ok := byName["lifespan"]; ok {
		t.Error("lifespan read as a counter")
	}
}

func TestReadSysfsCountersWithoutRDMACore(t *testing.T) {
	_, err := ReadSysfsCounters(filepath.Join(t.TempDir(), "infiniband"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("err %v, want fs.ErrNotExist", err)
	}
}

// statReply encodes an RDMA_NLDEV_CMD_STAT_GET answer as the kernel does
// (nldev's fill_stat_hwcounters): nested entries of name and u64 value.
func statReply(dev string, port uint32, counters []Counter) []byte {
	var b []byte
	b = append(b, nl.NewRtAttr(nl.RDMA_NLDEV_ATTR_DEV_INDEX, nl.Uint32Attr(1)).Serialize()...)
	b = append(b, nl.NewRtAttr(nl.RDMA_NLDEV_ATTR_DEV_NAME, nl.ZeroTerminated(dev)).Serialize()...)
	b = append(b, nl.NewRtAttr(nl.RDMA_NLDEV_ATTR_PORT_INDEX, nl.Uint32Attr(port)).Serialize()...)
	table := nl.NewRtAttr(int(nl.RDMA_NLDEV_ATTR_STAT_HWCOUNTERS|nl.NLA_F_NESTED), nil)
	for _, c := range counters {
		e := table.AddRtAttr(int(nl.RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY|nl.NLA_F_NESTED), nil)
		e.AddRtAttr(nl.RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME, nl.ZeroTerminated(c.Name))
		e.AddRtAttr(nl.RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE, nl.Uint64Attr(c.Value))
	}
	return append(b, table.Serialize()...)
}

func TestParseStatReplyKeepsKernelOrder(t *testing.T) {
	want := []Counter{{"sent_pkts", 1204}, {"rcvd_pkts", 1187}, {"duplicate_request", 41}, {"ack_deferred", 0}, {"rdma_recvs", 1 << 40}}
	pc, err := ParseStatReply(statReply("rxe0", 1, want))
	if err != nil {
		t.Fatal(err)
	}
	if pc.Device != "rxe0" || pc.Port != 1 || !reflect.DeepEqual(pc.HW, want) {
		t.Errorf("parsed %+v, want rxe0/1 %+v", pc, want)
	}
}

func TestParseStatReplyRejectsAnswerWithoutPort(t *testing.T) {
	b := nl.NewRtAttr(nl.RDMA_NLDEV_ATTR_DEV_NAME, nl.ZeroTerminated("rxe0")).Serialize()
	if _, err := ParseStatReply(b); err == nil {
		t.Error("an answer without a port index was accepted")
	}
}
