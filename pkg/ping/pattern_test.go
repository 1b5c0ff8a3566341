package ping

import (
	"bytes"
	"os"
	"testing"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// clientLines renders what rping's client prints with -v for count pings
// of size bytes, using FillPattern as the echoed data.
func clientLines(prefix string, size, count int) []byte {
	var out bytes.Buffer
	buf := make([]byte, size)
	for seq := 0; seq < count; seq++ {
		FillPattern(buf, seq)
		out.WriteString(prefix)
		out.Write(rdma.CString(buf))
		out.WriteByte('\n')
	}
	return out.Bytes()
}

func TestFillPatternMatchesRping(t *testing.T) {
	// testdata holds real rping output captured in the lab VM.
	cases := []struct {
		file, prefix string
		size, count  int
	}{
		{"rping-client-v-C3.out", "ping data: ", 64, 3},
		{"rping-server-v-C3.out", "server ping data: ", 64, 3},
		{"rping-client-v-S30-C2.out", "ping data: ", 30, 2},
		{"rping-client-v-S200-C70.out", "ping data: ", 200, 70}, // both rotations wrap
	}
	for _, c := range cases {
		want, err := os.ReadFile("testdata/" + c.file)
		if err != nil {
			t.Fatal(err)
		}
		if got := clientLines(c.prefix, c.size, c.count); !bytes.Equal(got, want) {
			t.Errorf("%s:\n got %q\nwant %q", c.file, got, want)
		}
	}
}

func TestFillPatternAtMinimumSizeKeepsTheLongestPrefix(t *testing.T) {
	buf := make([]byte, MinSize)
	FillPattern(buf, 2147483647)
	if got, want := string(rdma.CString(buf)), "rdma-ping-2147483647: "; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestFillPatternWrapsFromLowercaseZToA(t *testing.T) {
	buf := make([]byte, 100)
	FillPattern(buf, 57) // filler starts at 'z'
	data := rdma.CString(buf)
	if got := string(data[len("rdma-ping-57: "):][:3]); got != "zAB" {
		t.Fatalf("filler starts %q, want \"zAB\"", got)
	}
	FillPattern(buf, 58) // and the start itself wraps back to 'A'
	if got := rdma.CString(buf)[len("rdma-ping-58: ")]; got != 'A' {
		t.Fatalf("filler starts %q, want 'A'", got)
	}
}

func TestFillPatternDoesNotAllocate(t *testing.T) {
	buf := make([]byte, 1000)
	if n := testing.AllocsPerRun(100, func() { FillPattern(buf, 12345) }); n != 0 {
		t.Fatalf("%v allocations per call", n)
	}
}

// fillByteByByte is rping's filler loop, the reference for fillRotating.
func fillByteByByte(b []byte, c byte) {
	for i := range b {
		b[i] = c
		if c++; c > lastChar {
			c = firstChar
		}
	}
}

func TestFillRotatingMatchesTheByteLoop(t *testing.T) {
	for _, n := range []int{0, 1, 57, 58, 59, 116, 117, 1000, MaxSize} {
		for _, c := range []byte{firstChar, 'a', lastChar} {
			got, want := make([]byte, n), make([]byte, n)
			fillRotating(got, c)
			fillByteByByte(want, c)
			if !bytes.Equal(got, want) {
				t.Fatalf("%d bytes from %q differ", n, c)
			}
		}
	}
}

func BenchmarkFillPattern64K(b *testing.B) {
	buf := make([]byte, MaxSize)
	for i := 0; b.Loop(); i++ {
		FillPattern(buf, i)
	}
}
