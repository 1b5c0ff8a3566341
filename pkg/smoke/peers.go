package smoke

import (
	"bufio"
	"fmt"
	"io"
	"net/netip"
	"strings"
)

// ReadPeers reads a peers file: one peer address per line; blank lines and
// everything after '#' are ignored, and so are fields after the first (so
// an inventory line "10.0.0.5 node5" works). name is the file's name for
// error messages.
func ReadPeers(r io.Reader, name string) ([]string, error) {
	var peers []string
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		text, _, _ := strings.Cut(sc.Text(), "#")
		fields := strings.Fields(text)
		if len(fields) == 0 {
			continue
		}
		if !ValidPeer(fields[0]) {
			return nil, fmt.Errorf("%s:%d: %q is not an IP address or host name (one peer per line)", name, line, fields[0])
		}
		peers = append(peers, fields[0])
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	return peers, nil
}

// UniquePeers lists each peer once, in the order first given: an address
// however spelt (::ffff:10.9.0.1 is 10.9.0.1, shown so), a host name
// whatever its case.
func UniquePeers(peers []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range peers {
		if ip, err := netip.ParseAddr(p); err == nil {
			p = ip.Unmap().String()
		}
		if key := strings.ToLower(p); !seen[key] {
			seen[key] = true
			out = append(out, p)
		}
	}
	return out
}

// ValidPeer reports whether s is an IP address or a DNS host name.
func ValidPeer(s string) bool {
	if _, err := netip.ParseAddr(s); err == nil {
		return true
	}
	if s == "" || len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}
