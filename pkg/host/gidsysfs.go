package host

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// ParseSysfsGIDType reads a gid_attrs/types file's value: "RoCE v2", or
// "IB/RoCE v1", which is RoCE v1 on an Ethernet port and IB otherwise.
func ParseSysfsGIDType(s string, ll rdma.LinkLayer) (rdma.GIDType, error) {
	switch strings.TrimSpace(s) {
	case "RoCE v2":
		return rdma.GIDTypeRoCEv2, nil
	case "IB/RoCE v1":
		if ll == rdma.LinkLayerEthernet {
			return rdma.GIDTypeRoCEv1, nil
		}
		return rdma.GIDTypeIB, nil
	}
	return 0, fmt.Errorf("unknown GID type %q", s)
}

// ParseSysfsLinkLayer reads a port's link_layer file ("Ethernet", "InfiniBand").
func ParseSysfsLinkLayer(s string) rdma.LinkLayer {
	switch strings.TrimSpace(s) {
	case "InfiniBand":
		return rdma.LinkLayerInfiniBand
	case "Ethernet":
		return rdma.LinkLayerEthernet
	}
	return rdma.LinkLayerUnspecified
}

// ReadSysfsGIDs reads the populated GID entries of one port from its sysfs
// directory (SysfsClassDir/DEV/ports/N), in index order. Empty entries
// read as zeros and their type files fail (EINVAL), so both are skipped;
// Netdev is the gid_attrs/ndevs name.
func ReadSysfsGIDs(portDir string) ([]rdma.GIDEntry, error) {
	ll := rdma.LinkLayerUnspecified
	if b, err := os.ReadFile(filepath.Join(portDir, "link_layer")); err == nil {
		ll = ParseSysfsLinkLayer(string(b))
	}
	names, err := os.ReadDir(filepath.Join(portDir, "gids"))
	if err != nil {
		return nil, err
	}
	var out []rdma.GIDEntry
	for _, n := range names {
		idx, err := strconv.ParseUint(n.Name(), 10, 32)
		if err != nil {
			continue
		}
		e, err := ReadSysfsGID(portDir, uint32(idx), ll)
		if errors.Is(err, rdma.ErrNoGID) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Index < out[j].Index })
	return out, nil
}

// ReadSysfsGID reads entry index of the port whose link layer is ll;
// ErrNoGID when the entry is empty.
func ReadSysfsGID(portDir string, index uint32, ll rdma.LinkLayer) (rdma.GIDEntry, error) {
	n := strconv.FormatUint(uint64(index), 10)
	raw, err := os.ReadFile(filepath.Join(portDir, "gids", n))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return rdma.GIDEntry{}, err
		}
		return rdma.GIDEntry{}, rdma.ErrNoGID
	}
	g, err := rdma.ParseGID(strings.TrimSpace(string(raw)))
	if err != nil {
		return rdma.GIDEntry{}, err
	}
	if g.IsZero() {
		return rdma.GIDEntry{}, rdma.ErrNoGID
	}
	typ, err := os.ReadFile(filepath.Join(portDir, "gid_attrs", "types", n))
	if err != nil {
		return rdma.GIDEntry{}, rdma.ErrNoGID // the entry went away while we read it
	}
	t, err := ParseSysfsGIDType(string(typ), ll)
	if err != nil {
		return rdma.GIDEntry{}, err
	}
	ndev, _ := os.ReadFile(filepath.Join(portDir, "gid_attrs", "ndevs", n))
	return rdma.GIDEntry{Index: index, GID: g, Type: t, Netdev: strings.TrimSpace(string(ndev))}, nil
}
