package smoke

import (
	"bytes"
	"strings"
	"testing"
)

// A peers file may hold anything: every peer read from it is a valid one,
// and an error names the file.
func FuzzReadPeers(f *testing.F) {
	f.Add([]byte("10.9.0.1\n# comment\nnode5.example.com extra\n\nfd09::1\n"))
	f.Add([]byte("-bad-\n"))
	f.Add([]byte(strings.Repeat("a", 300)))
	f.Fuzz(func(t *testing.T, b []byte) {
		peers, err := ReadPeers(bytes.NewReader(b), "peers.txt")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "peers.txt") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		for _, p := range peers {
			if !ValidPeer(p) {
				t.Fatalf("invalid peer %q accepted", p)
			}
		}
	})
}
