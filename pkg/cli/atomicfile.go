package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// WriteFileAtomic replaces path whole: write fills a temporary file beside
// it (mode 0644), which is then renamed over path, so a reader (systemd's
// unit, node_exporter, a CI job) never sees half a file. Only a regular
// file (or none) is replaced: a symlink's target is, a device or FIFO
// (/dev/null, /dev/stdout, a pipe to a collector) is written into as it
// stands, and a directory is refused.
func WriteFileAtomic(path string, write func(io.Writer) error) error {
	target := path
	if resolved, err := filepath.EvalSymlinks(path); err == nil {
		target = resolved
	}
	st, err := os.Stat(target)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return err
	case st.IsDir():
		return fmt.Errorf("%s is a directory: name a file in it", path)
	case !st.Mode().IsRegular():
		return writeInPlace(target, write)
	}
	tmp, err := os.CreateTemp(filepath.Dir(target), "."+filepath.Base(target)+".*")
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
	return os.Rename(tmp.Name(), target)
}

// writeInPlace writes into a special file without replacing it. The open
// does not block: a FIFO nobody reads is an error, not a hang.
func writeInPlace(path string, write func(io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.ENXIO) {
		return fmt.Errorf("%s is a FIFO with no reader", path)
	}
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
