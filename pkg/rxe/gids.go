package rxe

import (
	"github.com/rdmactl/rdmactl/pkg/gids"
	"github.com/rdmactl/rdmactl/pkg/host"
)

// showGIDs turns the port's GIDs into pkg/gids entries, to print them as
// `rdmactl gids` (and show_gids) do.
func showGIDs(device string, p host.Port) []gids.Entry {
	out := make([]gids.Entry, 0, len(p.GIDs))
	for _, g := range p.GIDs {
		out = append(out, gids.Entry{Device: device, Port: uint8(p.Num), GIDEntry: g})
	}
	return out
}
