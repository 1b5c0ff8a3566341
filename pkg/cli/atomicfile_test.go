package cli

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestWriteFileAtomicReplacesWhole(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rdmactl.prom")
	_ = os.WriteFile(path, []byte("old\n"), 0o640)
	_ = os.Chmod(path, 0o640)
	if err := WriteFileAtomic(path, 0o666, func(w io.Writer) error { _, err := io.WriteString(w, "new\n"); return err }); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	ents, _ := os.ReadDir(filepath.Dir(path))
	st, _ := os.Stat(path)
	if string(b) != "new\n" || len(ents) != 1 || st.Mode().Perm() != 0o640 {
		t.Fatalf("content %q, mode %v (want the old file's 0640), %d files left", b, st.Mode().Perm(), len(ents))
	}
	if err := WriteFileAtomic(filepath.Join(path, "sub"), 0o666, func(io.Writer) error { return nil }); err == nil {
		t.Fatal("writing under a file succeeded")
	}
}

// A new file gets the mode asked for less the umask, as open(2) gives it:
// perftest's --out_json file is 0600, a report a collector reads is not.
func TestWriteFileAtomicNewFileMode(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	dir := t.TempDir()
	for _, c := range []struct{ perm, want os.FileMode }{{0o600, 0o600}, {0o666, 0o644}} {
		path := filepath.Join(dir, c.perm.String())
		if err := WriteFileAtomic(path, c.perm, func(w io.Writer) error { return nil }); err != nil {
			t.Fatal(err)
		}
		if st, err := os.Stat(path); err != nil || st.Mode().Perm() != c.want {
			t.Errorf("perm %v: got %v (%v), want %v", c.perm, st.Mode().Perm(), err, c.want)
		}
	}
}

// A device, a FIFO or a symlink is written through, never replaced by a
// regular file.
func TestWriteFileAtomicKeepsSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	hello := func(w io.Writer) error { _, err := io.WriteString(w, "hello\n"); return err }

	// Through symlinks in dir, so that a regression replaces the links,
	// never the host's devices.
	null, full := filepath.Join(dir, "null"), filepath.Join(dir, "full")
	_ = os.Symlink(os.DevNull, null)
	_ = os.Symlink("/dev/full", full)
	if err := WriteFileAtomic(null, 0o666, hello); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(full, 0o666, hello); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("writing /dev/full: %v, want ENOSPC", err)
	}
	for _, p := range []string{null, full} {
		if st, _ := os.Lstat(p); st.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s is now %v", p, st.Mode())
		}
	}

	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(fifo, 0o666, hello); err == nil || !strings.Contains(err.Error(), "no reader") {
		t.Errorf("FIFO without a reader: %v", err)
	}
	got := make(chan string, 1)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			got <- err.Error()
			return
		}
		defer f.Close()
		b, _ := io.ReadAll(f)
		got <- string(b)
	}()
	var err error
	for i := 0; i < 100; i++ { // until the reader has opened its end
		if err = WriteFileAtomic(fifo, 0o666, hello); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "hello\n" {
		t.Errorf("the FIFO's reader got %q", s)
	}
	if st, _ := os.Lstat(fifo); st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO is now %v", st.Mode())
	}

	real := filepath.Join(dir, "real.prom")
	link := filepath.Join(dir, "link.prom")
	_ = os.WriteFile(real, []byte("old\n"), 0o644)
	_ = os.Symlink(real, link)
	if err := WriteFileAtomic(link, 0o666, hello); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(real); string(b) != "hello\n" {
		t.Errorf("the symlink's target holds %q", b)
	}
	if st, _ := os.Lstat(link); st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the symlink is now %v", st.Mode())
	}

	if err := WriteFileAtomic(dir, 0o666, hello); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("writing a directory: %v", err)
	}
}
