package cgoverbs

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMapFileBuffer: what is written into the buffer lands in the file,
// at the offset given; a file too short for the buffer is refused before
// it is mapped (touching a mapping past the end of a file faults).
func TestMapFileBuffer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "buf")
	if err := os.WriteFile(path, make([]byte, 3*4096), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := MapFileBuffer(path, 4096, 8192)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Bytes()) != 8192 {
		t.Fatalf("%d bytes", len(b.Bytes()))
	}
	copy(b.Bytes()[100:], "landed")
	b.Close()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got[4096+100:4096+106], []byte("landed")) || bytes.Count(got, []byte{0}) != len(got)-6 {
		t.Errorf("the file does not hold what was written at 4096+100")
	}
	if _, err := MapFileBuffer(path, 8192, 8192); err == nil || !strings.Contains(err.Error(), "holds 12288 bytes, and the test's buffer needs 8192 from offset 8192") {
		t.Errorf("a file too short: %v", err)
	}
	if _, err := MapFileBuffer(filepath.Join(t.TempDir(), "none"), 0, 4096); !os.IsNotExist(err) {
		t.Errorf("no file: %v", err)
	}
}
