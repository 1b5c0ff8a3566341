package cli

import (
	"strings"
	"testing"
)

func TestJSONRequestedWhereverTheFlagStands(t *testing.T) {
	for _, tc := range []struct {
		args string
		want bool
	}{
		{"gids --bogus --json", true},
		{"--json gids", true},
		{"demo -p abc -j", true},
		{"devinfo -d rxe0", false},
		{"devinfo --json=false", false},
		{"devinfo --json=true", true},
		{"ping -c -a 10.9.0.1 -- --json", false},
		{"", false},
	} {
		if got := JSONRequested(strings.Fields(tc.args)); got != tc.want {
			t.Errorf("JSONRequested(%q) = %v, want %v", tc.args, got, tc.want)
		}
	}
}
