package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rdmactl/rdmactl/pkg/cli"
)

// version is the release (git describe) the Makefile stamps with -ldflags;
// empty in a plain `go build`, where buildVersion reads Go's build info.
var version string

// buildVersion names this build: the stamped release, else the module
// version of a `go install …@v0.1.0`, else the VCS revision Go embedded.
func buildVersion() string {
	if version != "" {
		return version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	return versionFromBuildInfo(bi)
}

func versionFromBuildInfo(bi *debug.BuildInfo) string {
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev == "" {
		// Built with -buildvcs=false or outside a checkout: say so.
		return "devel (no VCS information; build with `make build`)"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if modified == "true" {
		rev += "-dirty"
	}
	return "devel-" + rev
}

func newCmdVersion(f *cli.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print rdmactl's version, its Go version and the libibverbs it runs against",
		Args:  wantArgs(0, ""),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := fmt.Fprint(f.IO.Out, versionText(f.Version, runtime.Version(), verbsLibrary()))
			return err
		},
	}
}

func versionText(v, goVersion, verbs string) string {
	return fmt.Sprintf("rdmactl %s\n%s %s/%s\nlibibverbs: %s\n", v, goVersion, runtime.GOOS, runtime.GOARCH, verbs)
}

// verbsLibrary names the libibverbs this process has mapped, by its file:
// rdma-core installs libibverbs.so.1.14.NN.0 where NN is its release, so
// the name says both without asking dpkg or calling into the library.
func verbsLibrary() string {
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	path := mappedLibrary(string(maps), "libibverbs.so")
	if path == "" {
		return "not loaded"
	}
	return describeVerbsFile(path)
}

// mappedLibrary returns the path of the first mapping whose file name
// starts with prefix.
func mappedLibrary(maps, prefix string) string {
	for _, line := range strings.Split(maps, "\n") {
		i := strings.IndexByte(line, '/')
		if i < 0 {
			continue
		}
		if p := line[i:]; strings.HasPrefix(filepath.Base(p), prefix) {
			return p
		}
	}
	return ""
}

// describeVerbsFile turns /usr/lib/…/libibverbs.so.1.14.50.0 into
// "/usr/lib/…/libibverbs.so.1.14.50.0 (rdma-core 50.0)".
func describeVerbsFile(path string) string {
	rest, ok := strings.CutPrefix(filepath.Base(path), "libibverbs.so.1.")
	if !ok {
		return path
	}
	parts := strings.Split(rest, ".")
	if len(parts) >= 3 {
		return fmt.Sprintf("%s (rdma-core %s.%s)", path, parts[1], parts[2])
	}
	return path
}
