//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestSingleJSONOnFailure: with -j a failing
// command prints exactly one JSON document on stdout — its own with
// ok:false, or the error document — and exits non-zero.
func TestSingleJSONOnFailure(t *testing.T) {
	for _, args := range [][]string{
		{"-j", "devinfo", "-d", "nosuch"},
		{"-j", "gids", "--ip", "10.77.0.1"},
		{"-j", "gids", "--bogus"},
		{"-j", "demo", "-d", "nosuch", "-g", ownGID(t)},
		{"-j", "rxe", "remove", "nosuch"},
		{"-j", "ping", "-c", "-a", "10.9.0.1", "-p", fmt.Sprint(freshPort()), "-C", "1", "--timeout", "5s"},
		{"-j", "smoke", "--timeout", "0s"},
	} {
		r := run(t, time.Minute, rdmactl, args...)
		what := strings.Join(args, " ")
		if r.Code == 0 {
			t.Errorf("rdmactl %s: exit 0", what)
		}
		dec := json.NewDecoder(strings.NewReader(r.Stdout))
		var doc struct {
			SchemaVersion int             `json:"schema_version"`
			OK            *bool           `json:"ok"`
			Error         json.RawMessage `json:"error"`
		}
		if err := dec.Decode(&doc); err != nil {
			t.Errorf("rdmactl %s: stdout is not a JSON document: %v\n%q", what, err, r.Stdout)
			continue
		}
		if dec.More() || strings.Count(strings.TrimSpace(r.Stdout), "\n") != 0 {
			t.Errorf("rdmactl %s: more than one compact document on stdout:\n%s", what, r.Stdout)
		}
		if doc.SchemaVersion != 2 || doc.OK == nil || *doc.OK || len(doc.Error) == 0 {
			t.Errorf("rdmactl %s: want schema_version 2, ok false and an error: %s", what, r.Stdout)
		}
	}
}

// TestSingleJSONBigIntegers: devinfo's max_mr_size (2^64-1 on rxe) is a
// string, so it survives jq and JavaScript.
func TestSingleJSONBigIntegers(t *testing.T) {
	r := run(t, time.Minute, rdmactl, "-j", "devinfo", "-d", "rxe0")
	if r.Code != 0 || !strings.Contains(r.Stdout, `"max_mr_size":"18446744073709551615"`) || !strings.HasPrefix(r.Stdout, `{"schema_version":2,`) {
		t.Errorf("devinfo -j: exit %d\n%s", r.Code, r.Stdout)
	}
}
