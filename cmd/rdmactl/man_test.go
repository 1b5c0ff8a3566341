package main

// The man pages are generated from the command tree by this test, not by
// the shipped binary (which then links neither cobra/doc nor a Markdown
// renderer): `make man` runs it with -update-man, and a plain `go test`
// fails when man/ no longer matches the commands.

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/pollwait"
)

var updateMan = flag.Bool("update-man", false, "rewrite ../../man from the command tree (make man)")

const manDir = "../../man"

func TestManPagesAreCurrent(t *testing.T) {
	want := t.TempDir()
	if err := writeManPages(want, manDate()); err != nil {
		t.Fatal(err)
	}
	if *updateMan {
		if err := os.RemoveAll(manDir); err != nil {
			t.Fatal(err)
		}
		if err := os.CopyFS(manDir, os.DirFS(want)); err != nil {
			t.Fatal(err)
		}
		return
	}
	wantNames, gotNames := pageNames(t, want), pageNames(t, manDir)
	if strings.Join(wantNames, " ") != strings.Join(gotNames, " ") {
		t.Fatalf("man/ is stale (run make man): it has %v, the commands make %v", gotNames, wantNames)
	}
	for _, name := range wantNames {
		w, _ := os.ReadFile(filepath.Join(want, name))
		g, _ := os.ReadFile(filepath.Join(manDir, name))
		if undated(w) != undated(g) {
			t.Errorf("man/%s is stale: run make man", name)
		}
	}
}

func TestManPagesHaveTheSectionsPeopleLookFor(t *testing.T) {
	dir := t.TempDir()
	if err := writeManPages(dir, manDate()); err != nil {
		t.Fatal(err)
	}
	ping, err := os.ReadFile(filepath.Join(dir, "rdmactl-ping.1"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{".TH \"RDMACTL-PING\" \"1\"", ".SH EXIT STATUS", "\\fB22\\fP", ".SH ENVIRONMENT", "NO_COLOR",
		".SH FILES", ".SH EXAMPLES", ".SH SEE ALSO", "\\fBrping\\fP(1)"} {
		if !strings.Contains(string(ping), want) {
			t.Errorf("rdmactl-ping.1 lacks %q", want)
		}
	}
	for _, name := range pageNames(t, dir) {
		page, _ := os.ReadFile(filepath.Join(dir, name))
		for _, sec := range []string{".SH EXIT STATUS", ".SH ENVIRONMENT", ".SH FILES", ".SH SEE ALSO"} {
			if !strings.Contains(string(page), sec) {
				t.Errorf("%s lacks %s", name, sec)
			}
		}
	}
}

// manDate dates the pages by SOURCE_DATE_EPOCH (make man passes the last
// commit's) so that regenerating unchanged commands changes nothing.
func manDate() time.Time {
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		if sec, err := strconv.ParseInt(s, 10, 64); err == nil {
			return time.Unix(sec, 0).UTC()
		}
	}
	return time.Now().UTC()
}

var thLine = regexp.MustCompile(`(?m)^\.TH .*$`)

// undated drops the .TH line, which carries the month of generation.
func undated(b []byte) string { return thLine.ReplaceAllString(string(b), ".TH") }

func pageNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".1") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names
}

// writeManPages writes one page per visible command, as cobra/doc does,
// with the sections cobra does not know about added.
func writeManPages(dir string, date time.Time) error {
	f := &cli.Factory{IO: cli.Test(nil, &bytes.Buffer{}, &bytes.Buffer{}), Version: "man"}
	root := newCmdRoot(f)
	root.InitDefaultCompletionCmd()
	root.DisableAutoGenTag = true
	var walk func(*cobra.Command) error
	walk = func(c *cobra.Command) error {
		if !c.IsAvailableCommand() || c.IsAdditionalHelpTopicCommand() {
			return nil
		}
		for _, sub := range c.Commands() {
			if err := walk(sub); err != nil {
				return err
			}
		}
		var buf bytes.Buffer
		name := strings.ReplaceAll(c.CommandPath(), " ", "-")
		header := &doc.GenManHeader{Title: strings.ToUpper(name), Section: "1", Source: "rdmactl", Date: &date}
		if err := doc.GenMan(c, header, &buf); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, name+".1"), []byte(addManSections(c, buf.String())), 0o644)
	}
	return walk(root)
}

// Every RDMACTL_* variable a page names in ENVIRONMENT is one its command
// reads: set to a value its flag would refuse, the command must refuse it
// and name the variable. A page that claims a variable its command
// ignores fails here, for the command then runs.
func TestManEnvironmentIsWhatCommandsRead(t *testing.T) {
	dir := t.TempDir()
	if err := writeManPages(dir, manDate()); err != nil {
		t.Fatal(err)
	}
	checkManEnvironment(t, dir)
}

// invalidDefault is, per config key, a value that key never accepts.
var invalidDefault = map[string]string{cli.KeyDevice: "no/such", cli.KeyIBPort: "0", cli.KeyGIDIndex: "x", cli.KeyTCPPort: "0"}

// checkOperands are the operands a command needs to get past its
// argument check.
var checkOperands = map[string][]string{
	"rdmactl perf": {"write_bw"}, "rdmactl rxe add": {"eth0"}, "rdmactl rxe remove": {"rxe0"},
	"rdmactl completion bash": nil,
}

var envEntry = regexp.MustCompile(`(?m)^\\fB(RDMACTL_[A-Z_]+)\\fP$`)

func checkManEnvironment(t *testing.T, dir string) {
	t.Helper()
	for _, name := range pageNames(t, dir) {
		page, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		_, env := cutSection(string(page), ".SH ENVIRONMENT\n")
		path := strings.ReplaceAll(strings.TrimSuffix(name, ".1"), "-", " ")
		for _, m := range envEntry.FindAllStringSubmatch(env, -1) {
			variable := m[1]
			if variable == pollwait.TraceEnv && path == "rdmactl ping" {
				continue // a file name, read when the pings start: no value is refused
			}
			bad, ok := invalidDefault[strings.ToLower(strings.TrimPrefix(variable, "RDMACTL_"))]
			if !ok {
				t.Errorf("%s names %s, which is no config key's variable", name, variable)
				continue
			}
			isolateConfig(t)
			t.Setenv(variable, bad)
			f, _, _ := newTestFactory()
			root := newCmdRoot(f)
			stubRuns(root)
			root.SetArgs(append(strings.Fields(path)[1:], checkOperands[path]...))
			err := root.Execute()
			if cli.ExitCode(err) != cli.ExitUsage || !strings.Contains(fmt.Sprint(err), variable) {
				t.Errorf("%s names %s, but '%s' with %s=%q gives %v: the command ignores it", name, variable, path, variable, bad, err)
			}
		}
	}
}

// stubRuns replaces what every command does with nothing, keeping the
// flag parsing and the root's preparation (config, bound keys).
func stubRuns(c *cobra.Command) {
	if c.Runnable() {
		c.Run, c.RunE = nil, func(*cobra.Command, []string) error { return nil }
	}
	for _, sub := range c.Commands() {
		stubRuns(sub)
	}
}
