package pingpong

import "testing"

func TestYieldAfterYieldsAtOnceOnlyOnOneCPU(t *testing.T) {
	for _, tc := range []struct{ cpus, want int }{
		{0, 0}, {1, 0}, {2, spinsBeforeYield}, {64, spinsBeforeYield},
	} {
		if got := yieldAfter(tc.cpus); got != tc.want {
			t.Errorf("yieldAfter(%d) = %d, want %d", tc.cpus, got, tc.want)
		}
	}
}
