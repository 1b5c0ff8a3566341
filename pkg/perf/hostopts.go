package perf

import (
	"errors"
	"fmt"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// The options whose outcome depends on the device or the host: perftest's
// refusals where it refuses before looking, and its failures where the
// device or the host cannot (rxe has one port, no on-demand paging, no
// encryption; a host may have no huge pages reserved). What rdmactl
// itself does not do gets its own line.

// The ODP capability bits (IBV_ODP_SUPPORT_*) perftest needs for RC.
const (
	odpSupportSend = 1 << 0
	odpSupportRecv = 1 << 1
)

// checkAESXTS is perftest's parser on --aes_xts, whose refusals come
// before any device is looked at; past them rdmactl refuses it: it has
// no encryption. Without --aes_xts, perftest refuses its files.
func checkAESXTS(v *FlagValues, r Resolved) error {
	if !v.AESXTS {
		switch {
		case v.CredentialsPath != "":
			return refuse("--credentials_path", "", "giving credentials path supported only with enc/dec traffic")
		case v.KEKPath != "":
			return refuse("--kek_path", "", "giving kek path supported only with enc/dec traffic")
		case v.DEKAppPath != "":
			// sic: perftest names the kek path here too
			return refuse("--data_enc_key_app_path", "", "giving kek path supported only with enc/dec traffic")
		}
		return nil
	}
	switch {
	case r.Conn != rdma.QPTypeRC && r.Conn != 0:
		return refuse("--aes_xts", "", "aes_xts supported only on RC")
	case v.KEKPath == "":
		return refuse("--aes_xts", "", "Please provide key encryption key file path")
	case v.DEKAppPath == "":
		return refuse("--aes_xts", "", "Please provide data encryption key app path")
	case v.CredentialsPath == "":
		return refuse("--aes_xts", "", "Please provide credentials file path")
	case r.RDMACM:
		return refuse("--aes_xts", "", "rdma_cm doesn't support aes_xts")
	case r.Test == WriteLat:
		return refuse("--aes_xts", "", "aes_xts isn't supported on write_lat")
	case r.Size <= r.InlineSize:
		return refuse("--aes_xts", "", "aes_xts doesn't support Inline messages")
	}
	return errors.New("--aes_xts: rdmactl has no encryption")
}

// checkHostOptions refuses what perftest's parser refuses of -O, --odp
// and --use-srq.
func (r Resolved) checkHostOptions(t Test) error {
	switch {
	case r.DualPort && t.Latency():
		return refuse("-O", "", "Dual-port mode only supports BW tests.")
	case r.ODP && t.IsAtomic():
		return refuse("--odp", "", "ODP does not support ATOMICS for now")
	case r.ODP && r.Conn == rdma.QPTypeUC:
		return refuse("--odp", "", "ODP does not support UC")
	case r.SRQ && !t.IsSend():
		return refuse("--use-srq", "", "Using SRQ only avavilible in SEND tests.") // sic
	case r.SRQ && r.QPs > r.RxDepth:
		return refuse("--use-srq", "", "Using SRQ depth should be greater than number of QPs.")
	}
	return nil
}

// checkDeviceOptions fails -O and --odp as perftest does where the device
// lacks what they need, and refuses them where it has it: rdmactl runs on
// one port and registers its memory without on-demand paging.
func (s *session) checkDeviceOptions() error {
	if s.r.DualPort {
		if _, err := s.dev.QueryPort(2); err != nil {
			return cli.WithHint(fmt.Errorf("-O: Unable to query port 2 attributes: Couldn't set the link layer (%s has no port 2: %v)", s.devName, err), "drop -O")
		}
		return &UsageError{errors.New("-O: rdmactl runs on one port")}
	}
	if s.r.ODP {
		a, err := s.dev.QueryDevice()
		if err != nil {
			return fmt.Errorf("--odp: Couldn't query device for on-demand paging capabilities: %w", err)
		}
		switch {
		case a.ODPCaps.RC&odpSupportSend == 0:
			return cli.WithHint(fmt.Errorf("--odp: Send is not supported for RC transport. (%s has no on-demand paging for RC sends)", s.devName), "drop --odp")
		case a.ODPCaps.RC&odpSupportRecv == 0:
			return cli.WithHint(fmt.Errorf("--odp: Receive is not supported for RC transport. (%s has no on-demand paging for RC receives)", s.devName), "drop --odp")
		}
		return &UsageError{errors.New("--odp: rdmactl registers its memory without on-demand paging")}
	}
	return nil
}

// bufferErr is a buffer (rdma.ErrPerfBuffer) perftest would not have had
// either: no huge pages, a file that would not map; in its words.
func (s *session) bufferErr(err error) error {
	if s.r.MmapFile != "" {
		return fmt.Errorf("--mmap: Couldn't allocate work buf.: %w", err)
	}
	return cli.WithHint(fmt.Errorf("--use_hugepages: Failed to allocate hugepages. Please configure hugepages (%w)", err),
		"reserve huge pages of 2 MiB first, e.g. sysctl vm.nr_hugepages=16")
}
