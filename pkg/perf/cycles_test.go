package perf

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// x86's cpuinfo, two CPUs at different rates: perftest takes the first.
const cpuinfoX86 = `processor	: 0
vendor_id	: GenuineIntel
model name	: Intel(R) Xeon(R) CPU
cpu MHz		: 2000.000
cache size	: 16384 KB

processor	: 1
cpu MHz		: 2400.000
`

func TestCPUMHz(t *testing.T) {
	if mhz, err := cpuMHz(strings.NewReader(cpuinfoX86)); err != nil || mhz != 2000 {
		t.Errorf("x86 cpuinfo: %v MHz, %v", mhz, err)
	}
	for _, text := range []string{"processor\t: 0\nBogoMIPS\t: 50.00\n", "cpu MHz\t\t: 0.000\n", "cpu MHz\t\t: fast\n", ""} {
		if mhz, err := cpuMHz(strings.NewReader(text)); err == nil {
			t.Errorf("%q: %v MHz, want an error", text, mhz)
		}
	}
	if got := toCycles([]int64{0, 1000, 2500}, 2000); got[0] != 0 || got[1] != 2000 || got[2] != 5000 {
		t.Errorf("toCycles at 2000 MHz: %v", got)
	}
}

// TestCyclesAsPerftest: -C prints the rows and the samples in cycles at
// cpuinfo's rate, under perftest's [usec] headings (as ib_send_lat -C
// prints them), and --json stays in microseconds.
func TestCyclesAsPerftest(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpuinfo")
	if err := os.WriteFile(path, []byte(cpuinfoX86), 0o644); err != nil {
		t.Fatal(err)
	}
	defer func(p string) { cpuInfoPath = p }(cpuInfoPath)
	cpuInfoPath = path
	_, plain := runBoth(t, Options{Test: SendLat, GIDIndex: 1, IBPort: 1, Iters: 50})
	_, cyc := runBoth(t, Options{Test: SendLat, GIDIndex: 1, IBPort: 1, Iters: 50, Cycles: true, Histogram: true})
	row := regexp.MustCompile(`(?m)^ 2 +50 +([0-9.]+) +([0-9.]+) +([0-9.]+) `)
	p, c := row.FindStringSubmatch(plain), row.FindStringSubmatch(cyc)
	if p == nil || c == nil {
		t.Fatalf("no rows:\n%s\n%s", plain, cyc)
	}
	if p[3] != "10.00" || c[3] != "20000.00" {
		t.Errorf("t_typical %s usec and %s cycles, want 10.00 and 20000.00 at 2000 MHz", p[3], c[3])
	}
	if !strings.Contains(cyc, "#, cycles\n1, 20000\n") || !strings.Contains(cyc, " t_min[usec] ") {
		t.Errorf("-C -H: samples or heading:\n%s", cyc)
	}
	_, js := runBoth(t, Options{Test: SendLat, GIDIndex: 1, IBPort: 1, Iters: 50, Cycles: true, JSON: true})
	if !strings.Contains(js, `"t_typical_usec":10`) {
		t.Errorf("-C --json is not in microseconds:\n%s", js)
	}
	cpuInfoPath = filepath.Join(t.TempDir(), "none")
	if _, _, _, cerr := runPair(t, newFabric(), Options{Test: SendLat, GIDIndex: 1, IBPort: 1, Iters: 50, Cycles: true}); cerr == nil || !strings.HasPrefix(cerr.Error(), "-C: ") {
		t.Errorf("-C without cpuinfo: %v", cerr)
	}
	if _, err := (Options{Test: WriteBW, Cycles: true}).Resolve(); err == nil || !strings.Contains(err.Error(), "Available only on Latency tests") {
		t.Errorf("write_bw -C: %v", err)
	}
}

// TestHistogramInJSON: with -H, --json's latency row carries the samples
// -H prints (50 posts: 49 gaps, the 2 largest dropped) counted in buckets.
func TestHistogramInJSON(t *testing.T) {
	_, js := runBoth(t, Options{Test: SendLat, GIDIndex: 1, IBPort: 1, Iters: 50, Histogram: true, JSON: true})
	var doc struct {
		Latency []LatReport `json:"latency"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil || len(doc.Latency) != 1 {
		t.Fatalf("-H --json: %v\n%s", err, js)
	}
	var n uint64
	for _, b := range doc.Latency[0].Histogram {
		if b.Count == 0 || b.HighUsec <= b.LowUsec {
			t.Errorf("bucket %+v", b)
		}
		n += b.Count
	}
	if n != 47 {
		t.Errorf("-H --json: %d samples in %v, want 47", n, doc.Latency[0].Histogram)
	}
	_, js = runBoth(t, Options{Test: SendLat, GIDIndex: 1, IBPort: 1, Iters: 50, JSON: true})
	if strings.Contains(js, "histogram") {
		t.Errorf("--json without -H has a histogram:\n%s", js)
	}
}
