package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/host"
	"github.com/rdmactl/rdmactl/pkg/stat"
)

func runStatCmd(t *testing.T, args ...string) (*stat.Options, error) {
	t.Helper()
	isolateConfig(t)
	f, _, _ := newTestFactory()
	f.Host = host.System
	var got *stat.Options
	cmd := newCmdStat(f, func(o *stat.Options) error { got = o; return nil })
	cmd.SetArgs(args)
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	err := cmd.Execute()
	return got, err
}

func TestStatWatchOperands(t *testing.T) {
	for _, c := range []struct {
		args     []string
		interval time.Duration
		count    int
	}{
		{[]string{"--watch"}, time.Second, 0},
		{[]string{"--watch", "2"}, 2 * time.Second, 0},
		{[]string{"--watch", "0.5", "10"}, 500 * time.Millisecond, 10},
		{[]string{"-w", "250ms", "--count", "3"}, 250 * time.Millisecond, 3},
		{[]string{"-d", "rxe0", "-i", "1", "--watch", "1", "--plot", "r.svg"}, time.Second, 0},
	} {
		o, err := runStatCmd(t, c.args...)
		if err != nil {
			t.Errorf("%q: %v", c.args, err)
			continue
		}
		if !o.Watch || o.Interval != c.interval || o.Count != c.count || o.Source == nil {
			t.Errorf("%q: watch %v every %v count %d source %v", c.args, o.Watch, o.Interval, o.Count, o.Source)
		}
	}
	o, err := runStatCmd(t, "-d", "rxe1", "-i", "1")
	if err != nil || o.Watch || o.Device != "rxe1" || o.Port != "1" {
		t.Errorf("-d rxe1 -i 1: %+v %v", o, err)
	}
}

func TestStatBadOperands(t *testing.T) {
	for _, args := range [][]string{
		{"2"},                      // an interval without --watch
		{"--count", "3"},           // a count without --watch
		{"--plot", "r.svg"},        // a plot needs samples over time
		{"--watch", "abc"},         // not an interval
		{"--watch", "0"},           // no interval
		{"--watch", "1", "0"},      // no samples
		{"--watch", "1", "2", "3"}, // too many
		{"--watch", "--count", "-1"},
	} {
		if _, err := runStatCmd(t, args...); cli.ExitCode(err) != cli.ExitUsage {
			t.Errorf("%q: %v, want a usage error", args, err)
		}
	}
}
