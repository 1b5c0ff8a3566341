package main

import (
	"bytes"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/cli/schema"
)

func TestVersionFromBuildInfo(t *testing.T) {
	cases := []struct {
		name string
		bi   debug.BuildInfo
		want string
	}{
		{"go install at a tag", debug.BuildInfo{Main: debug.Module{Version: "v0.1.0"}}, "v0.1.0"},
		{"checkout", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.modified", Value: "false"}}}, "devel-0123456789ab"},
		{"dirty checkout", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.modified", Value: "true"}}}, "devel-0123456789ab-dirty"},
	}
	for _, c := range cases {
		if got := versionFromBuildInfo(&c.bi); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
	noVCS := versionFromBuildInfo(&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}})
	if noVCS == "dev" || !strings.Contains(noVCS, "no VCS") {
		t.Errorf("without VCS info: got %q, want a version that says why it has no revision", noVCS)
	}
}

func TestMappedLibrary(t *testing.T) {
	maps := "7f00-7f01 r--p 00000000 08:01 12 /usr/lib/x86_64-linux-gnu/libc.so.6\n" +
		"7f02-7f03 r-xp 00000000 08:01 13 /usr/lib/x86_64-linux-gnu/libibverbs.so.1.14.50.0\n" +
		"7f04-7f05 rw-p 00000000 00:00 0 [heap]\n"
	p := mappedLibrary(maps, "libibverbs.so")
	if p != "/usr/lib/x86_64-linux-gnu/libibverbs.so.1.14.50.0" {
		t.Fatalf("mappedLibrary = %q", p)
	}
	if got, want := describeVerbsFile(p), p+" (rdma-core 50.0)"; got != want {
		t.Errorf("describeVerbsFile = %q, want %q", got, want)
	}
	if got := mappedLibrary(maps, "librdmacm.so"); got != "" {
		t.Errorf("an unmapped library was found: %q", got)
	}
}

func TestVersionCommandNamesGoAndVerbs(t *testing.T) {
	out := versionText("v0.1.0", "go1.25.0", "/x/libibverbs.so.1.14.44.0 (rdma-core 44.0)")
	for _, want := range []string{"rdmactl v0.1.0\n", "go1.25.0 ", "libibverbs: /x/libibverbs.so.1.14.44.0 (rdma-core 44.0)\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("version output %q lacks %q", out, want)
		}
	}
}

func TestVersionJSON(t *testing.T) {
	var out, errOut bytes.Buffer
	f := &cli.Factory{IO: cli.Test(nil, &out, &errOut), Version: "v9.9.9", JSON: true}
	cmd := newCmdVersion(f)
	cmd.SetArgs(nil)
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if err := schema.Validate("version", out.Bytes()); err != nil || !strings.Contains(out.String(), `"version":"v9.9.9"`) {
		t.Errorf("%s: %v", out.String(), err)
	}
	if got := rdmaCoreRelease("/usr/lib/x86_64-linux-gnu/libibverbs.so.1.14.50.0"); got != "50.0" {
		t.Errorf("rdma-core release %q", got)
	}
}

// rdmactl -v, --version and version give one answer.
func TestVersionFlagAndCommandAgree(t *testing.T) {
	isolateConfig(t)
	var outs []string
	for _, args := range [][]string{{"version"}, {"-v"}, {"--version"}} {
		f, out, _ := newTestFactory()
		f.Version = "v9.9.9-test"
		if code := run(f, args); code != 0 {
			t.Fatalf("%v: exit %d", args, code)
		}
		outs = append(outs, out.String())
	}
	if !strings.HasPrefix(outs[0], "rdmactl v9.9.9-test\n") || outs[1] != outs[0] || outs[2] != outs[0] {
		t.Errorf("version, -v and --version differ: %q", outs)
	}
}
