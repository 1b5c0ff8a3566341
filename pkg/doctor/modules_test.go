package doctor

import "testing"

func TestParseProcModules(t *testing.T) {
	loaded := ParseProcModules(readFixture(t, "proc-modules.txt"))
	for _, m := range []string{"ib_core", "ib_uverbs", "rdma_ucm", "rdma_rxe", "nft_reject_inet"} {
		if !loaded[m] {
			t.Errorf("%s not seen as loaded", m)
		}
	}
	// Names in the "used by" column are not themselves entries.
	if loaded["rdma_rxe,"] || loaded["-"] || loaded[""] {
		t.Errorf("parsed junk: %v", loaded)
	}
}

func TestParseModuleIndex(t *testing.T) {
	avail := ParseModuleIndex(readFixture(t, "modules.dep.txt"))
	for _, m := range []string{"ib_core", "ib_uverbs", "rdma_ucm", "rdma_rxe", "nvme_rdma", "mlx5_ib"} {
		if !avail[m] {
			t.Errorf("%s not found in modules.dep", m)
		}
	}
	// Dependencies are listed after the colon; only the first path names an entry.
	if avail["configfs"] {
		t.Errorf("configfs is only a dependency in the excerpt")
	}
	// modules.builtin and compressed modules use the same names.
	b := ParseModuleIndex("kernel/drivers/infiniband/core/ib_core.ko\nkernel/drivers/nvme/host/nvme-rdma.ko.xz: x.ko\n")
	if !b["ib_core"] || !b["nvme_rdma"] || len(b) != 2 {
		t.Errorf("%v", b)
	}
}
