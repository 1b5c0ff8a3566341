package cli

import "testing"

func TestUnknownDeviceNamesItsSource(t *testing.T) {
	for _, tc := range []struct {
		source string
		code   int
		want   string
	}{
		{"-d", ExitUsage, `no RDMA device "rxe9" (from -d): the devices are rxe0, rxe1`},
		{"RDMACTL_DEVICE", ExitUsage, `no RDMA device "rxe9" (from RDMACTL_DEVICE): the devices are rxe0, rxe1`},
		{"/etc/rdmactl/config.yaml:device", ExitUsage, `no RDMA device "rxe9" (from /etc/rdmactl/config.yaml:device): the devices are rxe0, rxe1`},
	} {
		err := UnknownDevice("rxe9", tc.source, []string{"rxe0", "rxe1"})
		if err.Error() != tc.want || ExitCode(err) != tc.code {
			t.Errorf("%s: %q exit %d, want %q exit %d", tc.source, err, ExitCode(err), tc.want, tc.code)
		}
	}
}
