package cm

import (
	"strings"
	"testing"
	"time"
)

func at(us int64) time.Time { return time.UnixMicro(1_700_000_000_000_000 + us) }

func TestCmtimeTableAsShowPerfPrintsIt(t *testing.T) {
	tm := timings{conns: make([][stepCount]span, 2)}
	for s := 0; s < stepCount; s++ {
		tm.total[s] = span{at(0), at(3000)}
	}
	tm.conns[0][stepConnect] = span{at(0), at(1000)}
	tm.conns[1][stepConnect] = span{at(500), at(2750)}
	tm.conns[0][stepCreateID] = span{at(0), at(7)}
	var b strings.Builder
	writeTable(&b, tm.rows())
	want := "step              total ms     max ms     min us  us / conn\n" +
		"create id    :        3.00       0.01       7.00    1500.00\n" +
		"resolve addr :        3.00       0.001000000000.00    1500.00\n" +
		"resolve route:        3.00       0.001000000000.00    1500.00\n" +
		"create qp    :        3.00       0.001000000000.00    1500.00\n" +
		"connect      :        3.00       2.25    1000.00    1500.00\n" +
		"disconnect   :        3.00       0.001000000000.00    1500.00\n" +
		"destroy      :        3.00       0.001000000000.00    1500.00\n"
	if b.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", b.String(), want)
	}
	tm.bind = true
	if rows := tm.rows(); len(rows) != stepCount || rows[1].Step != "bind addr" {
		t.Errorf("with -b the table has the bind step: %+v", rows)
	}
}

func TestCmtimeConnectFigures(t *testing.T) {
	tm := timings{conns: make([][stepCount]span, 4)}
	tm.total[stepConnect] = span{at(0), at(2_000_000)}
	for i, us := range []int64{100, 400, 200} {
		tm.conns[i][stepConnect] = span{at(0), at(us)}
	}
	p := tm.connectPercentiles()
	if p.Conn != 3 || p.P50 != 200 || p.P90 != 400 || p.P99 != 400 || p.Max != 400 {
		t.Errorf("percentiles %+v", p)
	}
	if got := tm.perSecond(); got != 1.5 {
		t.Errorf("3 connections in 2 s: %v per second, want 1.5", got)
	}
	if got := (&timings{}).perSecond(); got != 0 {
		t.Errorf("no connect step: %v per second", got)
	}
}
