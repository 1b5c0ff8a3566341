package cli

import (
	"io"
	"os"
	"path/filepath"
)

// WriteFileAtomic replaces path whole: write fills a temporary file beside
// it (mode 0644), which is then renamed over path, so a reader (systemd's
// unit, node_exporter, a CI job) never sees half a file.
func WriteFileAtomic(path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := write(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
