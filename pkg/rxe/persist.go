package rxe

// Soft-RoCE links do not survive a reboot. `rxe add --persist` records a
// link in a small config file and `rxe apply` (run at boot by
// packaging/rdmactl-rxe.service) re-creates the recorded links that are
// missing: the config-file-plus-unit rdma-core's maintainers suggested
// when rxe_cfg went away.

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/rdmactl/rdmactl/pkg/cli"
)

// ConfPath is where persistent links are recorded.
const ConfPath = "/etc/rdmactl/rxe.conf"

// Link is one recorded Soft-RoCE link.
type Link struct {
	Name   string `json:"name"`
	Netdev string `json:"netdev"`
}

const confHeader = "# Soft-RoCE links re-created at boot by `rdmactl rxe apply` (rdmactl-rxe.service).\n" +
	"# One link a line: NAME NETDEV. Edited by `rdmactl rxe add|remove --persist`.\n"

// maxConfSize bounds what ReadLinks reads: a list of links is a few
// hundred bytes, and rxe.conf may be any file (a symlink to a device).
const maxConfSize = 1 << 20

// ReadLinks reads the recorded links; a missing file records none. Its
// errors name the file, and the line where one is at fault.
func ReadLinks(path string) ([]Link, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return nil, fmt.Errorf("%s is a directory: it must be a file of NAME NETDEV lines (remove the directory)", path)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxConfSize+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if len(b) > maxConfSize {
		return nil, fmt.Errorf("%s is over %d bytes: it must be a short file of NAME NETDEV lines", path, maxConfSize)
	}
	return parseLinks(path, b)
}

// maxShownLine bounds how much of a bad line an error quotes.
const maxShownLine = 80

func parseLinks(path string, b []byte) ([]Link, error) {
	var links []Link
	for n, text := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		line, _, _ := strings.Cut(text, "#")
		fields := strings.Fields(line)
		switch len(fields) {
		case 0:
			continue
		case 2:
			links = append(links, Link{Name: fields[0], Netdev: fields[1]})
		default:
			shown := strings.TrimSpace(line)
			if len(shown) > maxShownLine {
				shown = fmt.Sprintf("%s… (%d bytes)", shown[:maxShownLine], len(shown))
			}
			return nil, fmt.Errorf("%s:%d: want NAME NETDEV, got %q: fix or remove the line", path, n+1, shown)
		}
	}
	return links, nil
}

// RecordLink adds or replaces the entry for l.Netdev (one rxe link per
// netdev, as the kernel allows) and reports whether the file changed.
func RecordLink(path string, l Link) (bool, error) {
	links, err := ReadLinks(path)
	if err != nil {
		return false, err
	}
	kept := []Link{l}
	for _, old := range links {
		if old == l {
			return false, nil
		}
		if old.Netdev != l.Netdev && old.Name != l.Name {
			kept = append(kept, old)
		}
	}
	return true, writeLinks(path, kept)
}

// ForgetLink drops the entries whose name or netdev is target and returns
// them.
func ForgetLink(path, target string) ([]Link, error) {
	links, err := ReadLinks(path)
	if err != nil {
		return nil, err
	}
	var kept, dropped []Link
	for _, l := range links {
		if l.Name == target || l.Netdev == target {
			dropped = append(dropped, l)
		} else {
			kept = append(kept, l)
		}
	}
	if len(dropped) == 0 {
		return nil, nil
	}
	return dropped, writeLinks(path, kept)
}

// writeLinks replaces the file atomically, so that a crash never leaves
// the unit a half-written list.
func writeLinks(path string, links []Link) error {
	var b strings.Builder
	b.WriteString(confHeader)
	for _, l := range links {
		fmt.Fprintf(&b, "%s %s\n", l.Name, l.Netdev)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return cli.WriteFileAtomic(path, 0o644, func(w io.Writer) error {
		_, err := io.WriteString(w, b.String())
		return err
	})
}

// checkRecordable tells whether the links in conf can be rewritten: its
// lines parse and its directory takes a new file.
func checkRecordable(conf string) error {
	if _, err := ReadLinks(conf); err != nil {
		return err
	}
	dir := filepath.Dir(conf)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(conf)+".*")
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}

// confPath is opts' file, or ConfPath.
func confPath(p string) string {
	if p == "" {
		return ConfPath
	}
	return p
}

// markPersistent flags the rows whose link is recorded in conf; an
// unreadable file marks nothing (status still shows the kernel's view).
func markPersistent(rows []StatusRow, conf string) {
	links, err := ReadLinks(conf)
	if err != nil {
		return
	}
	for i, r := range rows {
		for _, l := range links {
			if r.Device != "" && r.Device == l.Name && r.Netdev == l.Netdev {
				rows[i].Persistent = true
			}
		}
	}
}

// writePersistentNote explains the * of persistent rows, when any.
func writePersistentNote(w io.Writer, rows []StatusRow) error {
	for _, r := range rows {
		if r.Persistent {
			_, err := fmt.Fprintf(w, "* recorded in %s: rdmactl rxe apply re-creates it at boot\n", ConfPath)
			return err
		}
	}
	return nil
}
