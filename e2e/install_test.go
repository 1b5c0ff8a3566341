//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

// TestSingleInstallDeb: make install-files (what make install runs after
// building, here with DESTDIR and PREFIX=/usr) fills a .deb that declares
// its runtime dependencies, installs with dpkg in the lab (whose root is a
// throw-away overlay) and lays out bin, man1, the three completions and
// the unit; the installed rdmactl prints what ibv_devinfo prints.
func TestSingleInstallDeb(t *testing.T) {
	out := t.TempDir()
	// Uncompressed: compressing 10 MB under emulation costs minutes.
	res := sh(t, 5*time.Minute, "DEB_COMPRESS=none ../packaging/mkdeb.sh "+rdmactl+" v0.1.0-2-gabc1234 "+out)
	if res.Code != 0 {
		t.Fatalf("mkdeb.sh: exit %d: %s%s", res.Code, res.Stdout, res.Stderr)
	}
	deb := strings.TrimSpace(res.Stdout)
	if filepath.Base(deb) != "rdmactl_0.1.0+2.gabc1234_amd64.deb" {
		t.Errorf("package file %s, want rdmactl_0.1.0+2.gabc1234_amd64.deb", filepath.Base(deb))
	}
	// An untagged tree's describe is a bare commit, one that may start with
	// a digit: never a version number.
	untagged := sh(t, 5*time.Minute, "DEB_COMPRESS=none ../packaging/mkdeb.sh "+rdmactl+" 286307a "+t.TempDir())
	if base := filepath.Base(strings.TrimSpace(untagged.Stdout)); untagged.Code != 0 || !strings.HasPrefix(base, "rdmactl_0.0.0~git") {
		t.Errorf("mkdeb.sh with the untagged version 286307a: exit %d, package %q, want rdmactl_0.0.0~git…\n%s", untagged.Code, base, untagged.Stderr)
	}
	fields := run(t, time.Minute, "dpkg-deb", "-f", deb, "Depends", "Recommends")
	for _, want := range []string{"libibverbs1", "librdmacm1", "ibverbs-providers", "Recommends: kmod, iptables"} {
		if !strings.Contains(fields.Stdout, want) {
			t.Errorf("control fields lack %q:\n%s", want, fields.Stdout)
		}
	}
	// --no-triggers: man-db's index rebuild would take minutes here; it
	// is a noawait trigger, so the package is fully installed without it.
	inst := run(t, 3*time.Minute, "dpkg", "-i", "--no-triggers", deb)
	if inst.Code != 0 {
		t.Fatalf("dpkg -i: exit %d: %s%s", inst.Code, inst.Stdout, inst.Stderr)
	}
	for _, p := range []string{
		"/usr/bin/rdmactl",
		"/usr/share/man/man1/rdmactl.1.gz",
		"/usr/share/man/man1/rdmactl-ping.1.gz",
		"/usr/share/man/man1/rdmactl-rxe-apply.1.gz",
		"/usr/share/bash-completion/completions/rdmactl",
		"/usr/share/zsh/site-functions/_rdmactl",
		"/usr/share/fish/vendor_completions.d/rdmactl.fish",
		"/usr/lib/systemd/system/rdmactl-rxe.service",
		"/usr/lib/systemd/system/rdmactl-serve.service",
		"/usr/share/doc/rdmactl/copyright",
		"/usr/share/doc/rdmactl/changelog.gz",
	} {
		if fi, err := os.Stat(p); err != nil || fi.Size() == 0 {
			t.Errorf("%s missing or empty after dpkg -i (%v)", p, err)
		}
	}
	unit, _ := os.ReadFile("/usr/lib/systemd/system/rdmactl-rxe.service")
	for _, want := range []string{"ExecStart=/usr/bin/rdmactl rxe apply\n", "After=network-online.target\n"} {
		if !strings.Contains(string(unit), want) {
			t.Errorf("rdmactl-rxe.service lacks %q:\n%s", want, unit)
		}
	}
	if man := sh(t, time.Minute, "man -l /usr/share/man/man1/rdmactl-ping.1.gz | col -b"); !strings.Contains(man.Stdout, "EXIT STATUS") || !strings.Contains(man.Stdout, "EXAMPLES") {
		t.Errorf("man -l rdmactl-ping.1 lacks EXIT STATUS or EXAMPLES:\n%s", man.Stdout)
	}
	real := run(t, time.Minute, "ibv_devinfo")
	ours := run(t, time.Minute, "/usr/bin/rdmactl", "devinfo")
	sameResult(t, "installed rdmactl devinfo", real, ours)
	if st := run(t, time.Minute, "dpkg-query", "-W", "-f", "${Status}", "rdmactl"); st.Stdout != "install ok installed" {
		t.Errorf("dpkg-query: %q", st.Stdout)
	}
	if rm := run(t, 3*time.Minute, "dpkg", "-r", "--no-triggers", "rdmactl"); rm.Code != 0 {
		t.Errorf("dpkg -r: exit %d: %s", rm.Code, rm.Stderr)
	}
}

// TestSingleVersionNamesTheLibrary: version prints Go's version and the
// libibverbs file, whose name carries the rdma-core release dpkg reports.
func TestSingleVersionNamesTheLibrary(t *testing.T) {
	res := run(t, time.Minute, rdmactl, "version")
	if res.Code != 0 {
		t.Fatalf("version: exit %d: %s", res.Code, res.Stderr)
	}
	pkg := run(t, time.Minute, "dpkg-query", "-W", "-f", "${Version}", "libibverbs1")
	release := strings.SplitN(pkg.Stdout, "-", 2)[0] // 44.0-2 -> 44.0
	if !strings.Contains(res.Stdout, "(rdma-core "+release+")") || !strings.Contains(res.Stdout, "\ngo1.") {
		t.Errorf("version output lacks rdma-core %s or the Go version:\n%s", release, res.Stdout)
	}
	if strings.HasPrefix(res.Stdout, "rdmactl dev\n") {
		t.Errorf("version says just dev:\n%s", res.Stdout)
	}
}

// completions runs `rdmactl __complete ARGS` and returns the candidates'
// values (before the tab), sorted.
func completions(t *testing.T, args ...string) []string {
	t.Helper()
	res := run(t, 30*time.Second, rdmactl, append([]string{"__complete"}, args...)...)
	if res.Code != 0 {
		t.Fatalf("__complete %q: exit %d: %s", args, res.Code, res.Stderr)
	}
	var vals []string
	for _, l := range strings.Split(res.Stdout, "\n") {
		if l == "" || strings.HasPrefix(l, ":") {
			continue
		}
		v, _, _ := strings.Cut(l, "\t")
		vals = append(vals, v)
	}
	sort.Strings(vals)
	return vals
}

// TestSingleCompletionKnowsTheHost compares the candidates with what the
// real tools show in the same boot.
func TestSingleCompletionKnowsTheHost(t *testing.T) {
	if got := strings.Join(completions(t, "demo", "-d", ""), " "); got != "rxe0 rxe1" {
		t.Errorf("demo -d: %q, want rxe0 rxe1", got)
	}
	if got := strings.Join(completions(t, "devinfo", "-d", "rxe1", "-i", ""), " "); got != "1" {
		t.Errorf("devinfo -d rxe1 -i: %q, want 1", got)
	}
	// The populated indexes, as ibv_devinfo -v lists them.
	dv := run(t, time.Minute, "ibv_devinfo", "-v", "-d", "rxe0")
	var want []string
	for _, m := range regexp.MustCompile(`GID\[\s*(\d+)\]:`).FindAllStringSubmatch(dv.Stdout, -1) {
		want = append(want, m[1])
	}
	want = append(want, "auto")
	sort.Strings(want)
	if got := completions(t, "demo", "-d", "rxe0", "-g", ""); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("demo -d rxe0 -g: %q, want ibv_devinfo's indexes %q", got, want)
	}
	gidLine := run(t, 30*time.Second, rdmactl, "__complete", "demo", "-d", "rxe0", "-g", "")
	if !strings.Contains(gidLine.Stdout, "\tRoCE v2 10.9.0.1") {
		t.Errorf("demo -g descriptions lack 'RoCE v2 10.9.0.1':\n%s", gidLine.Stdout)
	}
	if got := strings.Join(completions(t, "ping", "-c", "-a", ""), " "); got != "10.9.0.1 10.9.0.2" {
		t.Errorf("ping -a: %q, want 10.9.0.1 10.9.0.2", got)
	}
	// rxe remove: the links `rdma link show` lists.
	var links []string
	for _, m := range regexp.MustCompile(`link (\S+)/\d+ `).FindAllStringSubmatch(run(t, 30*time.Second, "rdma", "link", "show").Stdout, -1) {
		links = append(links, m[1])
	}
	sort.Strings(links)
	if got := completions(t, "rxe", "remove", ""); strings.Join(got, " ") != strings.Join(links, " ") {
		t.Errorf("rxe remove: %q, want rdma link show's %q", got, links)
	}
	// rxe add: only netdevs without an RDMA device.
	if got := completions(t, "rxe", "add", ""); len(got) != 0 {
		t.Errorf("rxe add with both veths taken: %q, want nothing", got)
	}
	if r := run(t, 30*time.Second, "ip", "link", "add", "vethc0", "type", "veth", "peer", "name", "vethc1"); r.Code != 0 {
		t.Fatalf("ip link add: %s", r.Stderr)
	}
	defer run(t, 30*time.Second, "ip", "link", "del", "vethc0")
	if got := strings.Join(completions(t, "rxe", "add", ""), " "); got != "vethc0 vethc1" {
		t.Errorf("rxe add: %q, want vethc0 vethc1", got)
	}
}

// TestSingleRxePersistSurvivesLinkDel: record rxe0, delete it behind
// rdmactl's back with `rdma link del`, and `rxe apply` brings it back;
// a second apply changes nothing.
func TestSingleRxePersistSurvivesLinkDel(t *testing.T) {
	defer os.Remove("/etc/rdmactl/rxe.conf")
	add := run(t, time.Minute, rdmactl, "rxe", "add", "veth0", "--persist")
	if add.Code != 0 || !strings.Contains(add.Stdout, "rxe0: recorded in /etc/rdmactl/rxe.conf") {
		t.Fatalf("rxe add veth0 --persist: exit %d: %s%s", add.Code, add.Stdout, add.Stderr)
	}
	conf, _ := os.ReadFile("/etc/rdmactl/rxe.conf")
	if !strings.Contains(string(conf), "\nrxe0 veth0\n") {
		t.Fatalf("rxe.conf:\n%s", conf)
	}
	if st := run(t, time.Minute, rdmactl, "rxe", "status"); !regexp.MustCompile(`rxe0\*`).MatchString(st.Stdout) {
		t.Errorf("rxe status does not mark rxe0 persistent:\n%s", st.Stdout)
	}
	if del := run(t, time.Minute, "rdma", "link", "del", "rxe0"); del.Code != 0 {
		t.Fatalf("rdma link del rxe0: %s", del.Stderr)
	}
	if l := rxeLinks(t, "veth0"); len(l) != 0 {
		t.Fatalf("rxe0 still there after rdma link del: %q", l)
	}
	apply := run(t, time.Minute, rdmactl, "rxe", "apply")
	if apply.Code != 0 || !strings.Contains(apply.Stdout, "rxe0: created on veth0, port 1 ACTIVE") {
		t.Fatalf("rxe apply: exit %d: %s%s", apply.Code, apply.Stdout, apply.Stderr)
	}
	if l := rxeLinks(t, "veth0"); len(l) != 1 || !strings.Contains(l[0], "link rxe0/1 ") {
		t.Errorf("after rxe apply, rdma link show for veth0: %q", l)
	}
	again := run(t, time.Minute, rdmactl, "rxe", "apply")
	if again.Code != 0 || strings.TrimSpace(again.Stdout) != "rxe0: already on veth0" {
		t.Errorf("second rxe apply: exit %d: %q %s", again.Code, again.Stdout, again.Stderr)
	}
}
