package cli

import (
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFileAtomicReplacesWhole(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rdmactl.prom")
	_ = os.WriteFile(path, []byte("old\n"), 0o600)
	if err := WriteFileAtomic(path, func(w io.Writer) error { _, err := io.WriteString(w, "new\n"); return err }); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	ents, _ := os.ReadDir(filepath.Dir(path))
	st, _ := os.Stat(path)
	if string(b) != "new\n" || len(ents) != 1 || st.Mode().Perm() != 0o644 {
		t.Fatalf("content %q, mode %v, %d files left", b, st.Mode().Perm(), len(ents))
	}
	if err := WriteFileAtomic(filepath.Join(path, "sub"), func(io.Writer) error { return nil }); err == nil {
		t.Fatal("writing under a file succeeded")
	}
}
