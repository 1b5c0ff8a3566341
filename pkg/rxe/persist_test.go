package rxe

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli/schema"
)

func TestRecordAndForgetLinks(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "etc", "rxe.conf")
	if links, err := ReadLinks(conf); err != nil || links != nil {
		t.Fatalf("missing file: links %v, err %v; want none, no error", links, err)
	}
	for _, l := range []Link{{"rxe0", "veth0"}, {"rxe1", "veth1"}, {"rxe_veth0", "veth0"}} {
		if _, err := RecordLink(conf, l); err != nil {
			t.Fatal(err)
		}
	}
	if changed, _ := RecordLink(conf, Link{"rxe1", "veth1"}); changed {
		t.Error("recording the same link twice changed the file")
	}
	links, err := ReadLinks(conf)
	if err != nil {
		t.Fatal(err)
	}
	// One link per netdev: rxe_veth0 replaced rxe0.
	if got := linksText(links); got != "rxe_veth0@veth0 rxe1@veth1" {
		t.Errorf("recorded %s, want rxe_veth0@veth0 rxe1@veth1", got)
	}
	dropped, err := ForgetLink(conf, "veth1") // by netdev
	if err != nil || linksText(dropped) != "rxe1@veth1" {
		t.Fatalf("forget veth1: dropped %v, err %v", dropped, err)
	}
	links, _ = ReadLinks(conf)
	if got := linksText(links); got != "rxe_veth0@veth0" {
		t.Errorf("after forgetting veth1: %s", got)
	}
	b, _ := os.ReadFile(conf)
	if !strings.HasPrefix(string(b), "# ") || !strings.HasSuffix(string(b), "\nrxe_veth0 veth0\n") {
		t.Errorf("file text:\n%s", b)
	}
}

func TestReadLinksNamesTheBadLine(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "rxe.conf")
	os.WriteFile(conf, []byte("# comment\nrxe0 veth0 # trailing\n\nrxe1\n"), 0o644)
	_, err := ReadLinks(conf)
	if err == nil || !strings.Contains(err.Error(), "rxe.conf:4: want NAME NETDEV") {
		t.Fatalf("err %v, want one naming line 4", err)
	}
}

func TestApplyCreatesMissingLinksAndIsIdempotent(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "rxe.conf")
	os.WriteFile(conf, []byte("rxe0 veth0\nrxe1 veth1\n"), 0o644)
	h := &fakeHost{netdevs: labNetdevs(), loaded: true}
	h.devs = append(h.devs, rxeDevice("rxe1", labNetdevs()[1], ""))
	io, out := testIO()
	wantExit(t, Apply(&ApplyOptions{IO: io, Conf: conf, Host: h}), 0)
	if strings.Join(h.adds, ",") != "rxe0@veth0" {
		t.Errorf("links added %v, want only the missing rxe0 on veth0", h.adds)
	}
	if !strings.Contains(out.String(), "rxe0: created on veth0") || !strings.Contains(out.String(), "rxe1: already on veth1") {
		t.Errorf("output:\n%s", out)
	}
	h.adds = nil
	wantExit(t, Apply(&ApplyOptions{IO: io, Conf: conf, Host: h}), 0)
	if len(h.adds) != 0 {
		t.Errorf("a second apply added %v", h.adds)
	}
}

func TestApplyWaitsForTheNetdevWithABound(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "rxe.conf")
	os.WriteFile(conf, []byte("rxe9 eth9\nrxe0 veth0\n"), 0o644)
	h := &fakeHost{netdevs: labNetdevs(), loaded: true}
	io, _ := testIO()
	start := time.Now()
	err := Apply(&ApplyOptions{IO: io, Conf: conf, Host: h, Wait: 300 * time.Millisecond})
	wantExit(t, err, 1)
	if d := time.Since(start); d < 300*time.Millisecond || d > 3*time.Second {
		t.Errorf("apply took %v, want about the 300ms bound", d)
	}
	if strings.Join(h.adds, ",") != "rxe0@veth0" {
		t.Errorf("links added %v: the missing netdev must not stop the others", h.adds)
	}
	if errText := io.ErrOut.(interface{ String() string }).String(); !strings.Contains(errText, "rxe9 on eth9: network device eth9 did not appear within 300ms") {
		t.Errorf("stderr %q", errText)
	}
}

func TestAddAndRemovePersistent(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "rxe.conf")
	h := &fakeHost{netdevs: labNetdevs(), loaded: true}
	io, out := testIO()
	wantExit(t, AddPersistent(&AddOptions{IO: io, Netdev: "veth0", Name: "rxe0", Host: h}, conf), 0)
	if links, _ := ReadLinks(conf); linksText(links) != "rxe0@veth0" {
		t.Fatalf("recorded %v", links)
	}
	if !strings.Contains(out.String(), "rxe0: recorded in "+conf) {
		t.Errorf("output:\n%s", out)
	}
	// Deleted by hand (rdma link del), then forgotten: only the file changes.
	h.devs = nil
	wantExit(t, RemovePersistent(&RemoveOptions{IO: io, Target: "rxe0", Host: h}, conf), 0)
	if links, _ := ReadLinks(conf); len(links) != 0 {
		t.Errorf("still recorded: %v", links)
	}
	// Neither in the kernel nor in the file: remove's own failure.
	wantExit(t, RemovePersistent(&RemoveOptions{IO: io, Target: "rxe0", Host: h}, conf), 1)
}

func linksText(links []Link) string {
	var parts []string
	for _, l := range links {
		parts = append(parts, l.Name+"@"+l.Netdev)
	}
	return strings.Join(parts, " ")
}

func TestStatusMarksPersistentLinks(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "rxe.conf")
	os.WriteFile(conf, []byte("rxe0 veth0\n"), 0o644)
	nds := labNetdevs()
	rows := StatusRows(nds, []Device{rxeDevice("rxe0", nds[2], ""), rxeDevice("rxe1", nds[1], "")})
	markPersistent(rows, conf)
	var b strings.Builder
	if err := WriteStatus(&b, rows); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	if !strings.Contains(text, " rxe0* ") || strings.Contains(text, "rxe1*") || !strings.HasSuffix(text, "* recorded in "+ConfPath+": rdmactl rxe apply re-creates it at boot\n") {
		t.Errorf("status:\n%s", text)
	}
}

// apply --json: one entry per recorded link with its own verdict; a link
// that could not be created has ok false and an error object.
func TestApplyJSON(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "rxe.conf")
	os.WriteFile(conf, []byte("rxe0 veth0\nrxe1 veth1\nrxe9 nosuch\n"), 0o644)
	h := &fakeHost{netdevs: labNetdevs(), loaded: true}
	h.devs = append(h.devs, rxeDevice("rxe1", labNetdevs()[1], ""))
	io, out := testIO()
	wantExit(t, Apply(&ApplyOptions{IO: io, JSON: true, Conf: conf, Host: h, Wait: time.Millisecond}), 1)
	if err := schema.Validate("rxe-apply", out.Bytes()); err != nil {
		t.Errorf("%s: against its schema: %v", out, err)
	}
	for _, want := range []string{`"ok":false,"links":[`, `{"device":"rxe0","netdev":"veth0","action":"created","ok":true}`,
		`{"device":"rxe1","netdev":"veth1","action":"present","ok":true}`, `{"device":"rxe9","netdev":"nosuch","action":"failed","ok":false,"error":{"message":`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("lacks %s:\n%s", want, out)
		}
	}
}

// --wait 0 looks once instead of waiting the default; a negative --wait is
// a usage error.
func TestApplyWaitZeroAndNegative(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "rxe.conf")
	os.WriteFile(conf, []byte("rxe9 eth9\n"), 0o644)
	h := &fakeHost{netdevs: labNetdevs(), loaded: true}
	io, _ := testIO()
	done := make(chan error, 1)
	go func() { done <- Apply(&ApplyOptions{IO: io, Conf: conf, Host: h, Wait: 0}) }()
	select {
	case err := <-done:
		wantExit(t, err, 1)
	case <-time.After(3 * time.Second):
		t.Fatal("--wait 0 still waiting after 3s")
	}
	if errText := io.ErrOut.(interface{ String() string }).String(); !strings.Contains(errText, "eth9 did not appear within 0s") {
		t.Errorf("stderr %q", errText)
	}
	err := Apply(&ApplyOptions{IO: io, Conf: conf, Host: h, Wait: -5 * time.Second})
	wantExit(t, err, 2)
	if !strings.Contains(err.Error(), "invalid --wait -5s") {
		t.Errorf("error %v", err)
	}
}

// A line longer than bufio.Scanner takes, and an rxe.conf that is a
// directory, are reported with the file (and the line), not as a scanner's
// or "the line's" fault.
func TestReadLinksLongLineAndDirectory(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "rxe.conf")
	os.WriteFile(conf, []byte("rxe0 veth0\n"+strings.Repeat("x", 70000)+"\n"), 0o644)
	_, err := ReadLinks(conf)
	if err == nil || !strings.Contains(err.Error(), conf+":2: want NAME NETDEV") || !strings.Contains(err.Error(), "(70000 bytes)") || len(err.Error()) > 300 {
		t.Errorf("long line: %v", err)
	}
	asDir := filepath.Join(dir, "etc", "rxe.conf")
	os.MkdirAll(asDir, 0o755)
	_, err = ReadLinks(asDir)
	if err == nil || !strings.Contains(err.Error(), asDir+" is a directory") || strings.Contains(err.Error(), "the line") {
		t.Errorf("directory: %v", err)
	}
	io, _ := testIO()
	err = Apply(&ApplyOptions{IO: io, Conf: asDir, Host: &fakeHost{netdevs: labNetdevs(), loaded: true}})
	wantExit(t, err, 1)
	if strings.Contains(err.Error(), "the line") {
		t.Errorf("apply blames a line: %v", err)
	}
}

// rxe add --persist where the file cannot be written creates no link and
// prints no success: stdout stays empty, the exit status is 1.
func TestAddPersistentUnwritable(t *testing.T) {
	blocker := filepath.Join(t.TempDir(), "etc")
	os.WriteFile(blocker, nil, 0o644) // a file where the directory should be
	conf := filepath.Join(blocker, "rdmactl", "rxe.conf")
	for _, asJSON := range []bool{false, true} {
		h := &fakeHost{netdevs: labNetdevs(), loaded: true}
		io, out := testIO()
		err := AddPersistent(&AddOptions{IO: io, JSON: asJSON, Netdev: "veth0", Name: "rxe0", Host: h}, conf)
		wantExit(t, err, 1)
		if out.Len() != 0 || len(h.adds) != 0 {
			t.Errorf("json=%v: stdout %q, links added %v", asJSON, out, h.adds)
		}
		if !strings.Contains(err.Error(), "cannot record the link in "+conf+", so none was created") {
			t.Errorf("error %v", err)
		}
	}
}
