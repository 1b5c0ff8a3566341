package main

import (
	"strconv"
	"strings"

	"github.com/rdmactl/rdmactl/pkg/cli"
)

// parseGIDFlag reads a GID index flag (demo's -g, perf's -x): empty for
// none, "auto" to choose from the peer's address, or an index 0 to 255.
func parseGIDFlag(flag, s string) (index int, auto, set bool, err error) {
	switch s = strings.TrimSpace(s); {
	case s == "":
		return 0, false, false, nil
	case strings.EqualFold(s, "auto"):
		return 0, true, false, nil
	}
	n, perr := strconv.ParseUint(s, 10, 8)
	if perr != nil {
		return 0, false, false, cli.Usagef("invalid %s %q: want a GID index (0 to 255, see 'rdmactl gids') or auto", flag, s)
	}
	return int(n), false, true, nil
}
