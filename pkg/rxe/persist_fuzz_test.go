package rxe

import (
	"strings"
	"testing"
)

// rxe.conf is a file anyone with root may have edited: whatever it holds,
// parsing names the file on error, and what it accepts writes back and
// parses the same.
func FuzzParseLinks(f *testing.F) {
	f.Add([]byte(confHeader + "rxe0 veth0\nrxe1 veth1 # comment\n\n"))
	f.Add([]byte("rxe0\n"))
	f.Add([]byte("a b c\n"))
	f.Add([]byte("rxe0 veth0\r\nrxe1\tveth1"))
	f.Add([]byte(strings.Repeat("x", 300) + "\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		links, err := parseLinks("rxe.conf", b)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "rxe.conf:") || len(err.Error()) > 400 {
				t.Fatalf("error %q", err)
			}
			return
		}
		var text strings.Builder
		for _, l := range links {
			if l.Name == "" || l.Netdev == "" || strings.ContainsAny(l.Name+l.Netdev, " \t\n#") {
				t.Fatalf("link %+v", l)
			}
			text.WriteString(l.Name + " " + l.Netdev + "\n")
		}
		again, err := parseLinks("rxe.conf", []byte(text.String()))
		if err != nil || len(again) != len(links) {
			t.Fatalf("written back %q: %v, %d links of %d", text.String(), err, len(again), len(links))
		}
		for i := range links {
			if again[i] != links[i] {
				t.Fatalf("link %d: %+v became %+v", i, links[i], again[i])
			}
		}
	})
}
