//go:build e2e

package e2e

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"testing"
	"time"
)

// lyingPerftest plays perftest's write_bw client over the exchange alone
// (it never writes a byte over RDMA) and reports the numbers it is given:
// the server's QP goes to RTR towards a QP that does not exist on
// 10.9.0.1's GID (one kernel: one device for both ends), and the server
// then waits for the client's "done" and its report.
func lyingPerftest(port int, iters uint64, avg float64) error {
	c, err := dialFrom(port)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Minute))
	step := func(mine []byte) error {
		if _, err := c.Write(mine); err != nil {
			return err
		}
		_, err := io.ReadFull(c, make([]byte, len(mine)))
		return err
	}
	version := make([]byte, 16)
	copy(version, "6.06")
	record := []byte(fmt.Sprintf("%04x:%04x:%06x:%06x:%08x:%016x:", 0, 1, 0x123, 0x456, 0x789, 0x1000) +
		strings.Repeat("00:", 10) + "ff:ff:0a:09:00:01:" + fmt.Sprintf("%08x:", 0) + "\x00")
	u64 := func(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }
	steps := [][]byte{version, u64(0)[:4], u64(0)[:4], []byte("3\x00"),
		record, record, record, // the QP records, the addresses, after RTR
		record, // the client is done
		u64(65536), u64(iters), u64(math.Float64bits(avg)), u64(math.Float64bits(avg)), u64(0),
		record}
	for i, s := range steps {
		if err := step(s); err != nil {
			return fmt.Errorf("step %d: %w", i+1, err)
		}
	}
	_, err = c.Write([]byte("done\x00"))
	return err
}

// TestSingleHostileLyingPerftestReport: a client's numbers are input. A
// NaN bandwidth must not make `perf --json`'s server fail to write its
// document, nor serve --json lose its log line; 2^64-1 iterations are
// refused, not logged as a bare integer beyond 2^53.
func TestSingleHostileLyingPerftestReport(t *testing.T) {
	x := gidIndexOf(t, "rxe0", "10.9.0.1")

	t.Run("perf-json-server", func(t *testing.T) {
		srv := start(t, 2*time.Minute, rdmactl, "--json", "perf", "write_bw", "-d", "rxe0", "-x", x, "-p", "18600")
		waitTCPListen(t, 18600)
		if err := lyingPerftest(18600, 1000, math.NaN()); err != nil {
			t.Logf("the lying client: %v", err)
		}
		r := srv.wait(t)
		var doc struct {
			OK    bool `json:"ok"`
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil || doc.OK || !strings.Contains(doc.Error.Message, "NaN") || strings.Contains(r.Stdout+r.Stderr, "unsupported value") {
			t.Errorf("perf --json server after a NaN report: exit %d, %v\n%s%s", r.Code, err, r.Stdout, r.Stderr)
		}
	})

	t.Run("serve-json", func(t *testing.T) {
		s := startServe(t, 7176, 19877, "-a", "10.9.0.1", "--json")
		waitTCPListen(t, perftestPort)
		for _, c := range []struct {
			iters uint64
			avg   float64
		}{{1000, math.NaN()}, {math.MaxUint64, 100}} {
			if err := lyingPerftest(perftestPort, c.iters, c.avg); err != nil {
				t.Logf("the lying client: %v", err)
			}
		}
		out := stopWithin(t, s.background, 3*time.Second)
		var lines []map[string]any
		for _, l := range strings.Split(strings.TrimSpace(out.Stdout), "\n") {
			var m map[string]any
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Errorf("log line %q: %v", l, err)
			}
			lines = append(lines, m)
		}
		if len(lines) != 2 {
			t.Fatalf("%d log lines for 2 clients:\n%s", len(lines), out.Stdout)
		}
		for i, want := range []string{"NaN", "18446744073709551615 iterations"} {
			e, _ := lines[i]["error"].(map[string]any)
			if lines[i]["ok"] != false || e == nil || !strings.Contains(fmt.Sprint(e["message"]), want) {
				t.Errorf("line %d: %v, want a failure naming %q", i+1, lines[i], want)
			}
		}
		if strings.Contains(out.Stdout, ":18446744073709551615") {
			t.Errorf("a bare integer beyond 2^53 in the log:\n%s", out.Stdout)
		}
	})
	noRDMALeft(t)
}
