package gids_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/cli/schema"
	"github.com/rdmactl/rdmactl/pkg/devinfo"
	"github.com/rdmactl/rdmactl/pkg/devinfo/devinfotest"
	"github.com/rdmactl/rdmactl/pkg/gids"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// run calls the command with a source and streams.
func run(src devinfo.Source, opts gids.Options, ios *cli.IOStreams) error {
	opts.Source, opts.IO = src, ios
	return gids.Run(context.Background(), &opts)
}

func labSource(t *testing.T) *devinfotest.Source {
	t.Helper()
	r, err := devinfotest.Load("../devinfo/testdata/lab-rxe.json")
	if err != nil {
		t.Fatal(err)
	}
	return &devinfotest.Source{Report: r}
}

// sysfsRow is one line of testdata/sysfs-gids.txt: what the kernel shows
// under /sys/class/infiniband for a populated GID, in the same boot as the
// verbs capture.
type sysfsRow struct {
	dev, port, index, gid, typ, ndev string
}

func readSysfs(t *testing.T) []sysfsRow {
	t.Helper()
	f, err := os.Open("testdata/sysfs-gids.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []sysfsRow
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "rxe0/ports/1 1 0000:...:0001 RoCE v2 veth0"
		fields := strings.Fields(sc.Text())
		if len(fields) != 6 {
			t.Fatalf("bad line %q", sc.Text())
		}
		devPort := strings.Split(fields[0], "/ports/")
		rows = append(rows, sysfsRow{devPort[0], devPort[1], fields[1], fields[2], fields[3] + " " + fields[4], fields[5]})
	}
	return rows
}

// The table has show_gids' header and one row per populated GID, each as
// show_gids builds it from sysfs: VER is the "v…" part of the type, the
// IPv4 column is filled (followed by two spaces) for IPv4-mapped GIDs.
func TestTableMatchesSysfs(t *testing.T) {
	var want strings.Builder
	want.WriteString("DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4  \t\tVER\tDEV\n")
	want.WriteString("---\t----\t-----\t---\t\t\t\t\t------------  \t---\t---\n")
	rows := readSysfs(t)
	for _, r := range rows {
		ver := r.typ[strings.Index(r.typ, "v"):]
		if strings.HasPrefix(r.gid, "0000:0000:0000:0000:0000:ffff:") {
			b := func(i int) int { n, _ := strconv.ParseUint(r.gid[i:i+2], 16, 8); return int(n) }
			ipv4 := fmt.Sprintf("%d.%d.%d.%d", b(30), b(32), b(35), b(37))
			fmt.Fprintf(&want, "%s\t%s\t%s\t%s\t%s  \t%s\t%s\n", r.dev, r.port, r.index, r.gid, ipv4, ver, r.ndev)
		} else {
			fmt.Fprintf(&want, "%s\t%s\t%s\t%s\t\t\t%s\t%s\n", r.dev, r.port, r.index, r.gid, ver, r.ndev)
		}
	}
	fmt.Fprintf(&want, "n_gids_found=%d\n", len(rows))
	want.WriteString("recommended: rxe0 port 1 index 1 (RoCE v2, 10.9.0.1, veth0): use -g 1\n")
	want.WriteString("recommended: rxe1 port 1 index 1 (RoCE v2, 10.9.0.2, veth1): use -g 1\n")

	var out bytes.Buffer
	ios := cli.Test(nil, &out, &out)
	if err := run(labSource(t), gids.Options{}, ios); err != nil {
		t.Fatal(err)
	}
	if out.String() != want.String() {
		t.Errorf("got:\n%s\nwant:\n%s", out.String(), want.String())
	}
}

// Standard output is show_gids' to its last line, n_gids_found=N; the GIDs
// to use are named on standard error.
func TestAdviceOnStderr(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := run(labSource(t), gids.Options{}, cli.Test(nil, &out, &errOut)); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "n_gids_found=") || strings.Contains(out.String(), "recommended") {
		t.Errorf("stdout does not end as show_gids':\n%s", out.String())
	}
	want := "recommended: rxe0 port 1 index 1 (RoCE v2, 10.9.0.1, veth0): use -g 1\n" +
		"recommended: rxe1 port 1 index 1 (RoCE v2, 10.9.0.2, veth1): use -g 1\n"
	if errOut.String() != want {
		t.Errorf("stderr %q, want %q", errOut.String(), want)
	}
}

func TestFilters(t *testing.T) {
	var out bytes.Buffer
	if err := run(labSource(t), gids.Options{Device: "rxe1", Port: "1"}, cli.Test(nil, &out, &out)); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "rxe0") || !strings.Contains(out.String(), "n_gids_found=3\n") {
		t.Errorf("-d rxe1 -p 1:\n%s", out.String())
	}
}

func TestIPPrintsTheIndex(t *testing.T) {
	for ip, want := range map[string]string{"10.9.0.1": "1\n", "10.9.0.2": "1\n", "fd09::2": "2\n", "::ffff:10.9.0.1": "1\n"} {
		var out bytes.Buffer
		if err := run(labSource(t), gids.Options{IP: ip}, cli.Test(nil, &out, &out)); err != nil {
			t.Errorf("--ip %s: %v", ip, err)
		}
		if out.String() != want {
			t.Errorf("--ip %s printed %q, want %q", ip, out.String(), want)
		}
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		opts gids.Options
		code int
		msg  string
	}{
		{gids.Options{IP: "10.9.0.9"}, cli.ExitFailed, "no GID carries 10.9.0.9"},
		{gids.Options{IP: "10.9.0.2", Device: "rxe0"}, cli.ExitFailed, "no GID carries 10.9.0.2"},
		{gids.Options{IP: "rxe0"}, cli.ExitUsage, `--ip "rxe0" is not an IP address`},
		{gids.Options{Port: "0"}, cli.ExitUsage, `invalid port "0"`},
		{gids.Options{Port: "x"}, cli.ExitUsage, `invalid port "x"`},
		{gids.Options{Port: "2"}, cli.ExitFailed, "no RDMA device has a port 2"},
		{gids.Options{Port: "2", Device: "rxe0"}, cli.ExitFailed, "rxe0 has no port 2"},
		{gids.Options{Device: "mlx5_0", DeviceSource: "-d"}, cli.ExitUsage, `no RDMA device "mlx5_0" (from -d): the devices are rxe0, rxe1`},
		{gids.Options{Device: "mlx5_0", DeviceSource: "RDMACTL_DEVICE"}, cli.ExitUsage, `no RDMA device "mlx5_0" (from RDMACTL_DEVICE): the devices are rxe0, rxe1`},
	}
	for _, tt := range tests {
		var out bytes.Buffer
		err := run(labSource(t), tt.opts, cli.Test(nil, &out, &out))
		if cli.ExitCode(err) != tt.code || err == nil || !strings.Contains(err.Error(), tt.msg) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: %v (exit %d), want exit %d and one line with %q", tt.opts, err, cli.ExitCode(err), tt.code, tt.msg)
		}
		if out.Len() != 0 {
			t.Errorf("%+v: printed %q", tt.opts, out.String())
		}
	}
	var out bytes.Buffer
	err := run(&devinfotest.Source{Report: &devinfo.Report{}}, gids.Options{}, cli.Test(nil, &out, &out))
	if cli.ExitCode(err) != cli.ExitFailed || !strings.Contains(err.Error(), "no RDMA devices found") {
		t.Errorf("no devices: %v", err)
	}
}

func TestJSON(t *testing.T) {
	var out bytes.Buffer
	if err := run(labSource(t), gids.Options{JSON: true, Device: "rxe0"}, cli.Test(nil, &out, &out)); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		GIDs []map[string]any `json:"gids"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if err := schema.Validate("gids", out.Bytes()); err != nil {
		t.Errorf("against its schema: %v", err)
	}
	if len(doc.GIDs) != 3 {
		t.Fatalf("want the 3 GIDs of rxe0, got %v", doc.GIDs)
	}
	want := map[string]any{"device": "rxe0", "port": float64(1), "gid_index": float64(1), "gid": "::ffff:10.9.0.1",
		"ipv4": "10.9.0.1", "gid_type": "RoCE v2", "netdev": "veth0", "recommended": true}
	if fmt.Sprint(doc.GIDs[1]) != fmt.Sprint(want) {
		t.Errorf("got %v\nwant %v", doc.GIDs[1], want)
	}
	if doc.GIDs[0]["recommended"] != false || doc.GIDs[0]["ipv4"] != nil {
		t.Errorf("link-local GID: %v", doc.GIDs[0])
	}

	out.Reset()
	if err := run(labSource(t), gids.Options{JSON: true, IP: "10.9.0.2"}, cli.Test(nil, &out, &out)); err != nil {
		t.Fatal(err)
	}
	if err := schema.Validate("gids", out.Bytes()); err != nil {
		t.Errorf("--ip against its schema: %v", err)
	}
	var one map[string]any
	if err := json.Unmarshal(out.Bytes(), &one); err != nil || one["device"] != "rxe1" || one["gid_index"] != float64(1) {
		t.Errorf("--json --ip: %v %s", err, out.String())
	}
}

func entry(dev string, index uint32, gid string, typ rdma.GIDType) gids.Entry {
	return gids.Entry{Device: dev, Port: 1, GIDEntry: rdma.GIDEntry{Index: index, GID: rdma.GIDFor(netip.MustParseAddr(gid)), Type: typ}}
}

func TestChooseForIP(t *testing.T) {
	entries := []gids.Entry{
		entry("mlx5_0", 2, "::ffff:192.168.1.1", rdma.GIDTypeRoCEv1),
		entry("mlx5_0", 3, "::ffff:192.168.1.1", rdma.GIDTypeRoCEv2),
		entry("mlx5_1", 3, "::ffff:192.168.1.1", rdma.GIDTypeRoCEv2),
		entry("mlx5_1", 4, "::ffff:192.168.2.1", rdma.GIDTypeRoCEv1),
	}
	tests := []struct {
		ip        string
		dev       string
		index     uint32
		wantError bool
	}{
		{"192.168.1.1", "mlx5_0", 3, false}, // RoCE v2 before v1, first device
		{"192.168.2.1", "mlx5_1", 4, false}, // only v1 there is
		{"::ffff:192.168.1.1", "mlx5_0", 3, false},
		{"192.168.3.1", "", 0, true},
	}
	for _, tt := range tests {
		e, err := gids.ChooseForIP(entries, netip.MustParseAddr(tt.ip))
		if (err != nil) != tt.wantError || e.Device != tt.dev || e.Index != tt.index {
			t.Errorf("%s: got %s index %d, %v", tt.ip, e.Device, e.Index, err)
		}
	}
}

func TestTableNotesMissingRoCEv2IPv4(t *testing.T) {
	var out bytes.Buffer
	entries := []gids.Entry{entry("rxe0", 0, "fe80::1", rdma.GIDTypeRoCEv2)}
	if err := gids.WriteTable(&out, entries, cli.Test(nil, nil, nil).Palette()); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(out.String(), "n_gids_found=1\nnote: no RoCE v2 GID has an IPv4 address: add one to the netdev of the RDMA device\n") {
		t.Errorf("got:\n%s", out.String())
	}

	// InfiniBand GIDs have no RoCE version, so nothing to recommend or note.
	out.Reset()
	entries = []gids.Entry{entry("mlx4_0", 0, "fe80::2c9:300:1:2", rdma.GIDTypeIB)}
	if err := gids.WriteTable(&out, entries, cli.Test(nil, nil, nil).Palette()); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(out.String(), "\nmlx4_0\t1\t0\tfe80:0000:0000:0000:02c9:0300:0001:0002\t\t\t\t\nn_gids_found=1\n") {
		t.Errorf("got:\n%q", out.String())
	}
}
