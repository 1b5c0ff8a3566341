package host

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fixtureTree builds a sysfs class directory from "path<TAB>value" lines.
func fixtureTree(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		p, v, ok := strings.Cut(line, "\t")
		if !ok {
			t.Fatalf("bad fixture line %q", line)
		}
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}
