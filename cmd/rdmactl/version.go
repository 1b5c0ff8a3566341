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
			path := verbsLibrary()
			if f.JSON {
				return cli.WriteJSON(f.IO.Out, versionDocument{Version: f.Version, Go: runtime.Version(),
					Platform: runtime.GOOS + "/" + runtime.GOARCH, Libibverbs: path, RDMACore: rdmaCoreRelease(path)})
			}
			_, err := fmt.Fprint(f.IO.Out, versionText(f.Version, runtime.Version(), describeVerbsFile(path)))
			return err
		},
	}
}

// versionDocument is version's --json: rdma_core is empty when the
// library's file name does not tell the release.
type versionDocument struct {
	Version    string `json:"version"`
	Go         string `json:"go"`
	Platform   string `json:"platform"`
	Libibverbs string `json:"libibverbs"`
	RDMACore   string `json:"rdma_core"`
}

// setVersionFlag gives the root -v/--version, which runs `rdmactl
// version` (its --json too), so the two never disagree. It is a plain flag, not
// cobra's version template: executing any template keeps every exported
// method of every type in the binary (text/template finds methods by
// name), megabytes that a long-running responder then maps.
func setVersionFlag(root *cobra.Command) {
	show := root.Flags().BoolP("version", "v", false, "print the version, as 'rdmactl version' does")
	run := root.RunE
	root.RunE = func(cmd *cobra.Command, args []string) error {
		if v, _, err := cmd.Find([]string{"version"}); *show && err == nil {
			return v.RunE(v, nil)
		}
		return run(cmd, args)
	}
}

func versionText(v, goVersion, verbs string) string {
	return fmt.Sprintf("rdmactl %s\n%s %s/%s\nlibibverbs: %s\n", v, goVersion, runtime.GOOS, runtime.GOARCH, verbs)
}

// verbsLibrary is the file of the libibverbs this process has mapped, or
// why there is none: rdma-core installs libibverbs.so.1.14.NN.0 where NN
// is its release, so the name says both without asking dpkg or calling
// into the library.
func verbsLibrary() string {
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	path := mappedLibrary(string(maps), "libibverbs.so")
	if path == "" {
		return "not loaded"
	}
	return path
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
	if release := rdmaCoreRelease(path); release != "" {
		return fmt.Sprintf("%s (rdma-core %s)", path, release)
	}
	return path
}

// rdmaCoreRelease reads the rdma-core release (50.0) from the name of its
// libibverbs file, "" when the name does not have it.
func rdmaCoreRelease(path string) string {
	rest, ok := strings.CutPrefix(filepath.Base(path), "libibverbs.so.1.")
	if !ok {
		return ""
	}
	parts := strings.Split(rest, ".")
	if len(parts) >= 3 {
		return parts[1] + "." + parts[2]
	}
	return ""
}
