package perf

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// -C reports the latency tests' samples in CPU cycles, which perftest
// counts with the CPU's time stamp counter and turns into time at the
// clock rate /proc/cpuinfo gives. rdmactl times in nanoseconds and turns
// them into cycles at that same rate: the first "cpu MHz" there.

// cpuInfoPath is where -C reads the CPU's clock rate.
var cpuInfoPath = "/proc/cpuinfo"

// maxCPUInfo bounds the read of cpuinfo (a line per CPU feature, per CPU).
const maxCPUInfo = 4 << 20

// latUnit is the unit latency rows print: its name, and how many stamps
// (nanoseconds, or cycles) make one.
type latUnit struct {
	name    string
	perUnit float64
}

var (
	usecUnit   = latUnit{"usec", 1000}
	cyclesUnit = latUnit{"cycles", 1}
)

// readCPUMHz is the first "cpu MHz" of cpuinfo, as perftest reads it.
func readCPUMHz() (float64, error) {
	f, err := os.Open(cpuInfoPath)
	if err != nil {
		return 0, fmt.Errorf("-C: %w", err)
	}
	defer f.Close()
	return cpuMHz(io.LimitReader(f, maxCPUInfo))
}

// cpuMHz finds the first "cpu MHz : N" line with N above 0.
func cpuMHz(r io.Reader) (float64, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok || strings.Join(strings.Fields(key), " ") != "cpu MHz" {
			continue
		}
		if mhz, err := strconv.ParseFloat(strings.TrimSpace(val), 64); err == nil && mhz > 0 {
			return mhz, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("-C: reading %s: %w", cpuInfoPath, err)
	}
	return 0, errors.New("-C: " + cpuInfoPath + " gives no cpu MHz, so rdmactl cannot count cycles here; drop -C")
}

// toCycles turns nanosecond stamps into cycles of a mhz clock.
func toCycles(ns []int64, mhz float64) []int64 {
	out := make([]int64, len(ns))
	for i, v := range ns {
		out[i] = int64(float64(v) * mhz / 1000)
	}
	return out
}
