package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// WriteFileAtomic replaces path whole: write fills a temporary file beside
// it, which is then renamed over path, so a reader (systemd's unit,
// node_exporter, a CI job) never sees half a file. The file keeps the mode
// of the one it replaces, as a rewrite in place would; a new one gets perm
// less the umask, as open(2) gives it. Only a regular file (or none) is
// replaced: a symlink's target is, a device or FIFO (/dev/null,
// /dev/stdout, a pipe to a collector) is written into as it stands, and a
// directory is refused.
func WriteFileAtomic(path string, perm fs.FileMode, write func(io.Writer) error) error {
	target := path
	if resolved, err := filepath.EvalSymlinks(path); err == nil {
		target = resolved
	}
	st, err := os.Stat(target)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		st = nil
	case err != nil:
		return err
	case st.IsDir():
		return fmt.Errorf("%s is a directory: name a file in it", path)
	case !st.Mode().IsRegular():
		return writeInPlace(target, write)
	}
	tmp, err := createBeside(target, perm)
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := write(tmp); err != nil {
		tmp.Close()
		return err
	}
	if st != nil {
		if err := tmp.Chmod(st.Mode().Perm()); err != nil {
			tmp.Close()
			return err
		}
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), target)
}

// createBeside creates a new hidden file next to target with perm, which
// the kernel lessens by the umask (os.CreateTemp's are always 0600).
func createBeside(target string, perm fs.FileMode) (*os.File, error) {
	dir, base := filepath.Split(target)
	for range 100 {
		name := filepath.Join(dir, "."+base+"."+strconv.FormatUint(rand.Uint64(), 36))
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	return nil, fmt.Errorf("%s: no free temporary name beside it", target)
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
