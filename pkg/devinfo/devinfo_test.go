package devinfo_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/cli/schema"
	"github.com/rdmactl/rdmactl/pkg/devinfo"
	"github.com/rdmactl/rdmactl/pkg/devinfo/devinfotest"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// The options each captured case's arguments stand for (the cmd package
// tests that the flags parse into these).
var caseOptions = map[string]devinfo.Options{
	"default":      {},
	"v":            {Verbose: true},
	"l":            {List: true},
	"d-rxe0":       {Device: "rxe0"},
	"d-rxe1-i-1":   {Device: "rxe1", Port: "1"},
	"v-d-rxe0-i-1": {Verbose: true, Device: "rxe0", Port: "1"},
	"d-nosuch":     {Device: "nosuch"},
	"d-empty":      {Named: true},
	"i-0":          {Port: "0"},
	"i-99":         {Port: "99"},
	"i-2":          {Port: "2"},
	"i-256":        {Port: "256"},
	"i-257":        {Port: "257"},
	"i-0x1":        {Port: "0x1"},
	"i-1abc":       {Port: "1abc"},
	"i-abc":        {Port: "abc"},
	"l-i-0":        {List: true, Port: "0"},
	"none-default": {},
	"none-l":       {List: true},
	"none-d-rxe0":  {Device: "rxe0"},
}

// run and runDevices call the commands with a source and two streams.
func run(src devinfo.Source, opts devinfo.Options, out, errOut io.Writer) error {
	opts.Source, opts.IO = src, cli.Test(nil, out, errOut)
	return devinfo.Run(context.Background(), &opts)
}

func runDevices(src devinfo.Source, opts devinfo.DevicesOptions, out, errOut io.Writer) error {
	opts.Source, opts.IO = src, cli.Test(nil, out, errOut)
	return devinfo.RunDevices(&opts)
}

func labSource(t *testing.T) *devinfotest.Source {
	t.Helper()
	r, err := devinfotest.Load("testdata/lab-rxe.json")
	if err != nil {
		t.Fatal(err)
	}
	return &devinfotest.Source{Report: r}
}

type captured struct {
	stdout, stderr string
	status         int
}

func readCapture(t *testing.T, dir string) captured {
	t.Helper()
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	status, err := strconv.Atoi(strings.TrimSpace(read("status")))
	if err != nil {
		t.Fatal(err)
	}
	return captured{read("stdout"), read("stderr"), status}
}

func TestRunMatchesCapturedIBVDevinfo(t *testing.T) {
	dirs, err := filepath.Glob("testdata/ibv_devinfo/*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no captured cases: %v", err)
	}
	for _, dir := range dirs {
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			opts, ok := caseOptions[name]
			if !ok {
				t.Fatalf("case %s has no options in caseOptions", name)
			}
			src := labSource(t)
			if strings.HasPrefix(name, "none-") {
				src = &devinfotest.Source{Report: &devinfo.Report{}}
			}
			want := readCapture(t, dir)
			var out, errOut bytes.Buffer
			err := run(src, opts, &out, &errOut)
			if got := out.String(); got != want.stdout {
				t.Errorf("stdout differs from ibv_devinfo's\n got:\n%s\nwant:\n%s", got, want.stdout)
			}
			if got := errOut.String(); got != want.stderr {
				t.Errorf("stderr = %q, ibv_devinfo's = %q", got, want.stderr)
			}
			if got := cli.ExitCode(err); got != want.status {
				t.Errorf("exit code = %d, ibv_devinfo's = %d", got, want.status)
			}
			if err != nil && !cli.IsSilent(err) {
				t.Errorf("error %v would add a line ibv_devinfo does not print", err)
			}
		})
	}
}

func TestRunDevicesMatchesCapturedIBVDevices(t *testing.T) {
	for name, src := range map[string]*devinfotest.Source{
		"lab":  labSource(t),
		"none": {Report: &devinfo.Report{}},
	} {
		t.Run(name, func(t *testing.T) {
			want := readCapture(t, "testdata/ibv_devices/"+name)
			var out, errOut bytes.Buffer
			err := runDevices(src, devinfo.DevicesOptions{}, &out, &errOut)
			if out.String() != want.stdout || errOut.String() != want.stderr || cli.ExitCode(err) != want.status {
				t.Errorf("got stdout %q stderr %q exit %d\nwant stdout %q stderr %q exit %d",
					out.String(), errOut.String(), cli.ExitCode(err), want.stdout, want.stderr, want.status)
			}
		})
	}
}

// When libibverbs cannot list devices (no RDMA in the kernel), both tools
// print perror's line; ibv_devinfo exits 255 and ibv_devices 1 (as seen
// on a machine without /sys/class/infiniband).
func TestDeviceListFailure(t *testing.T) {
	src := &devinfotest.Source{ListErr: rdma.Errorf("ibv_get_device_list", syscall.ENOSYS)}
	const line = "Failed to get IB devices list: Function not implemented\n"

	for _, opts := range []devinfo.Options{{}, {List: true}, {Device: "rxe0", Verbose: true}} {
		var out, errOut bytes.Buffer
		err := run(src, opts, &out, &errOut)
		if out.Len() != 0 || errOut.String() != line || cli.ExitCode(err) != 255 {
			t.Errorf("devinfo %+v: stdout %q stderr %q exit %d", opts, out.String(), errOut.String(), cli.ExitCode(err))
		}
	}
	var out, errOut bytes.Buffer
	err := runDevices(src, devinfo.DevicesOptions{}, &out, &errOut)
	if out.Len() != 0 || errOut.String() != line || cli.ExitCode(err) != 1 {
		t.Errorf("devices: stdout %q stderr %q exit %d", out.String(), errOut.String(), cli.ExitCode(err))
	}
}

// Query failures cannot be provoked in the lab; their lines and statuses
// are those of print_hca_cap in rdma-core 44's devinfo.c.
func TestQueryFailures(t *testing.T) {
	full := readCapture(t, "testdata/ibv_devinfo/v").stdout
	rxe1 := full[strings.Index(full, "hca_id:\trxe1"):]
	rxe0 := strings.TrimSuffix(full, rxe1)

	tests := []struct {
		fail       string
		err        error
		wantStdout string
		wantStderr string
		wantStatus int
	}{
		{"open rxe0", errors.New("x"), rxe1, "Failed to open device\n", 1},
		{"query_device rxe0", errors.New("x"), rxe1, "Failed to query device props\n", 2},
		{"query_port rxe0 1", syscall.EINVAL, rxe0[:strings.Index(rxe0, "\t\tport:")] + rxe1,
			"Failed to query port 1 props\n", int(syscall.EINVAL)},
		// The GID list stops where the query failed, without the blank line
		// that ends a port.
		{"gid rxe0 1 1", errors.New("x"), rxe0[:strings.Index(rxe0, "\t\t\tGID[  1]")] + rxe1,
			"Failed to query gid to port 1, index 1\n", 255},
		// A failed close comes last and without a newline; it sets status 3.
		{"close rxe0", errors.New("x"), full, "Failed to close device", 3},
	}
	for _, tt := range tests {
		t.Run(tt.fail, func(t *testing.T) {
			src := labSource(t)
			src.Fail = map[string]error{tt.fail: tt.err}
			var out, errOut bytes.Buffer
			err := run(src, devinfo.Options{Verbose: true}, &out, &errOut)
			if out.String() != tt.wantStdout {
				t.Errorf("stdout:\n%s\nwant:\n%s", out.String(), tt.wantStdout)
			}
			if errOut.String() != tt.wantStderr || cli.ExitCode(err) != tt.wantStatus {
				t.Errorf("stderr %q exit %d, want %q exit %d", errOut.String(), cli.ExitCode(err), tt.wantStderr, tt.wantStatus)
			}
		})
	}
}

// The exit status ORs the statuses of all devices, as ibv_devinfo does.
func TestStatusesOfDevicesCombine(t *testing.T) {
	src := labSource(t)
	src.Fail = map[string]error{"open rxe0": errors.New("x"), "query_device rxe1": errors.New("x")}
	var out, errOut bytes.Buffer
	err := run(src, devinfo.Options{}, &out, &errOut)
	if got := cli.ExitCode(err); got != 1|2 {
		t.Errorf("exit code %d, want 3", got)
	}
	if errOut.String() != "Failed to open device\nFailed to query device props\n" {
		t.Errorf("stderr %q", errOut.String())
	}
}

func TestJSONCarriesTheQueriedData(t *testing.T) {
	var out bytes.Buffer
	if err := run(labSource(t), devinfo.Options{JSON: true, Device: "rxe0", Port: "1"}, &out, &out); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Devices []struct {
			Name       string         `json:"device"`
			Attributes map[string]any `json:"attributes"`
			Ports      []struct {
				Port       int            `json:"port"`
				Attributes map[string]any `json:"attributes"`
				GIDs       []struct {
					Index  int    `json:"gid_index"`
					GID    string `json:"gid"`
					Type   string `json:"gid_type"`
					Netdev string `json:"netdev"`
				} `json:"gids"`
			} `json:"ports"`
		} `json:"devices"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out.String())
	}
	if err := schema.Validate("devinfo", out.Bytes()); err != nil {
		t.Errorf("against its schema: %v", err)
	}
	if len(doc.Devices) != 1 || doc.Devices[0].Name != "rxe0" || len(doc.Devices[0].Ports) != 1 {
		t.Fatalf("want rxe0 with its one port, got %+v", doc.Devices)
	}
	d := doc.Devices[0]
	if d.Attributes["node_guid"] != "3471:66ff:fe64:c7ee" || d.Attributes["atomic_cap"] != "ATOMIC_HCA" ||
		d.Attributes["max_qp"] != float64(1048560) {
		t.Errorf("device attributes %v", d.Attributes)
	}
	p := d.Ports[0]
	// Port states as `rdma link -j` spells them, MTUs in bytes as numbers.
	if p.Attributes["state"] != "ACTIVE" || p.Attributes["physical_state"] != "LINK_UP" ||
		p.Attributes["active_mtu"] != float64(1024) || p.Attributes["max_mtu"] != float64(4096) ||
		p.Attributes["link_layer"] != "Ethernet" || p.Attributes["gid_tbl_len"] != float64(1024) {
		t.Errorf("port attributes %v", p.Attributes)
	}
	if len(p.GIDs) != 3 || p.GIDs[1].GID != "::ffff:10.9.0.1" || p.GIDs[1].Type != "RoCE v2" || p.GIDs[1].Netdev != "veth0" {
		t.Errorf("GIDs %+v", p.GIDs)
	}
}

// JSON mode keeps stdout for JSON: errors are rdmactl's one-line ones.
func TestJSONErrors(t *testing.T) {
	tests := []struct {
		opts devinfo.Options
		code int
		msg  string
	}{
		{devinfo.Options{Port: "0"}, cli.ExitUsage, `invalid port "0"`},
		{devinfo.Options{Port: "1abc"}, cli.ExitUsage, `invalid port "1abc"`},
		{devinfo.Options{Port: "99"}, cli.ExitFailed, "rxe0: no port 99 (it has only port 1)"},
		{devinfo.Options{Device: "nosuch"}, cli.ExitUsage, `no RDMA device "nosuch" (from -d): the devices are rxe0, rxe1`},
	}
	for _, tt := range tests {
		tt.opts.JSON = true
		var out, errOut bytes.Buffer
		err := run(labSource(t), tt.opts, &out, &errOut)
		if cli.ExitCode(err) != tt.code || err == nil || !strings.Contains(err.Error(), tt.msg) || cli.IsSilent(err) {
			t.Errorf("%+v: error %v (exit %d), want exit %d with %q", tt.opts, err, cli.ExitCode(err), tt.code, tt.msg)
		}
		if out.Len() != 0 || errOut.Len() != 0 {
			t.Errorf("%+v: wrote %q / %q; the error is main's to print", tt.opts, out.String(), errOut.String())
		}
	}
}

// The JSON document reads back into the data it was written from, so a
// capture replays exactly.
func TestJSONRoundTrip(t *testing.T) {
	want, err := os.ReadFile("testdata/lab-rxe.json")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run(labSource(t), devinfo.Options{JSON: true}, &out, &out); err != nil {
		t.Fatal(err)
	}
	// The capture is the model as collected; the command prints it as the
	// JSON contract says (schema_version, 2^64-1 as a string, compact).
	var contract bytes.Buffer
	if err := cli.EncodeDocument(&contract, json.RawMessage(want), false); err != nil {
		t.Fatal(err)
	}
	if out.String() != contract.String() {
		t.Errorf("re-encoded capture differs:\n%s", out.String())
	}
	if !strings.Contains(out.String(), `"max_mr_size":"18446744073709551615"`) {
		t.Errorf("max_mr_size (2^64-1) is not a string: %s", out.String())
	}
}

func TestDevicesJSON(t *testing.T) {
	var out bytes.Buffer
	if err := runDevices(labSource(t), devinfo.DevicesOptions{JSON: true}, &out, &out); err != nil {
		t.Fatal(err)
	}
	want := `{"schema_version":2,"devices":[{"device":"rxe0","node_guid":"3471:66ff:fe64:c7ee"},{"device":"rxe1","node_guid":"8087:03ff:fe96:b97c"}]}
`
	if out.String() != want {
		t.Errorf("got\n%s", out.String())
	}
	if err := schema.Validate("devices", out.Bytes()); err != nil {
		t.Errorf("against its schema: %v", err)
	}
	out.Reset()
	if err := runDevices(&devinfotest.Source{Report: &devinfo.Report{}}, devinfo.DevicesOptions{JSON: true}, &out, &out); err != nil {
		t.Fatal(err)
	}
	if out.String() != "{\"schema_version\":2,\"devices\":[]}\n" {
		t.Errorf("no devices: got %q", out.String())
	}
}

// Empty lists are [] in JSON, never null: a port whose GID table is empty
// and a device without ports.
func TestJSONEmptyLists(t *testing.T) {
	src := labSource(t)
	src.Report.Devices[0].Ports[0].GIDs = nil
	src.Report.Devices[1].Attr.PhysPortCnt = 0
	src.Report.Devices[1].Ports = nil
	var out bytes.Buffer
	if err := run(src, devinfo.Options{JSON: true}, &out, &out); err != nil {
		t.Fatal(err)
	}
	if err := schema.Validate("devinfo", out.Bytes()); err != nil {
		t.Errorf("against its schema: %v", err)
	}
	if strings.Contains(out.String(), "null") || !strings.Contains(out.String(), `"gids":[]`) || !strings.Contains(out.String(), `"ports":[]`) {
		t.Errorf("want [] for the empty GID table and port list:\n%s", out.String())
	}
}
