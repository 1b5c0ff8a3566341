package perf

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// TestHostOptionRefusals: --aes_xts, --dont_xchg_versions, -O, --odp and
// --use-srq
// are refused where perftest's parser refuses them, in its words; past
// them rdmactl says what it does not do.
func TestHostOptionRefusals(t *testing.T) {
	paths := map[string]string{"aes_xts": "", "kek_path": "/k", "data_enc_key_app_path": "/d", "credentials_path": "/c"}
	with := func(m map[string]string, kv ...string) map[string]string {
		out := map[string]string{}
		for k, v := range m {
			out[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	for _, c := range []struct {
		test    Test
		args    map[string]string
		want    string
		perftst bool
	}{
		{WriteBW, map[string]string{"aes_xts": ""}, "Please provide key encryption key file path", true},
		{WriteBW, map[string]string{"aes_xts": "", "connection": "UC"}, "aes_xts supported only on RC", true},
		{WriteBW, map[string]string{"aes_xts": "", "kek_path": "/k"}, "Please provide data encryption key app path", true},
		{WriteBW, map[string]string{"aes_xts": "", "kek_path": "/k", "data_enc_key_app_path": "/d"}, "Please provide credentials file path", true},
		{WriteLat, paths, "aes_xts isn't supported on write_lat", true},
		{WriteBW, with(paths, "rdma_cm", ""), "rdma_cm doesn't support aes_xts", true},
		{WriteBW, with(paths, "inline_size", "100", "size", "64"), "aes_xts doesn't support Inline messages", true},
		{WriteBW, paths, "rdmactl has no encryption", false},
		// the files without --aes_xts, on every test (the key app's
		// refusal says "kek path" too, as perftest's does)
		{SendBW, map[string]string{"kek_path": "/k"}, "giving kek path supported only with enc/dec traffic", true},
		{AtomicBW, map[string]string{"data_enc_key_app_path": "/d"}, "giving kek path supported only with enc/dec traffic", true},
		{ReadLat, map[string]string{"kek_path": "/k", "credentials_path": "/c"}, "giving credentials path supported only with enc/dec traffic", true},
		{WriteBW, map[string]string{"dont_xchg_versions": ""}, "Current implementation is not compatible with versions older than 5.70", true},
		{WriteLat, map[string]string{"dualport": ""}, "Dual-port mode only supports BW tests.", true},
		{AtomicBW, map[string]string{"odp": ""}, "ODP does not support ATOMICS for now", true},
		{WriteBW, map[string]string{"odp": "", "connection": "UC"}, "ODP does not support UC", true},
		{WriteBW, map[string]string{"use-srq": ""}, "Using SRQ only avavilible in SEND tests.", true},
		{SendBW, map[string]string{"use-srq": "", "qp": "4", "rx-depth": "2"}, "Using SRQ depth should be greater than number of QPs.", true},
	} {
		_, err := resolveFlags(t, c.test, c.args)
		var refusal *Refusal
		switch {
		case err == nil || !strings.Contains(err.Error(), c.want):
			t.Errorf("%v %v: %v, want %q", c.test, c.args, err, c.want)
		case c.perftst != errors.As(err, &refusal):
			t.Errorf("%v %v: %v: perftest's refusal %v, want %v", c.test, c.args, err, !c.perftst, c.perftst)
		}
	}
}

// TestDeviceOptionFailures: on a device with one port and no on-demand
// paging (rxe), -O and --odp fail as perftest fails there, exit 1, before
// any exchange.
func TestDeviceOptionFailures(t *testing.T) {
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{Test: WriteBW, DualPort: true}, "-O: Unable to query port 2 attributes: Couldn't set the link layer (rxe0 has no port 2"},
		{Options{Test: WriteBW, ODP: true}, "--odp: Send is not supported for RC transport. (rxe0 has no on-demand paging for RC sends)"},
	} {
		o := c.o
		o.GIDIndex, o.IBPort, o.Server = 1, 1, "127.0.0.1"
		var out, errOut bytes.Buffer
		err := runOn(o, newFabric(), &out, &errOut)
		var usage *UsageError
		if err == nil || !strings.Contains(err.Error(), c.want) || errors.As(err, &usage) {
			t.Errorf("%+v: %v, want %q (exit 1)", c.o, err, c.want)
		}
	}
}
