package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// A failure answers in JSON when -j/--json is anywhere on the command
// line: before or after a bad flag, for emulated commands too, and a
// command group given --json alone is an error, not help with exit 0.
func TestJSONWhateverTheFlagOrder(t *testing.T) {
	isolateConfig(t)
	for _, tc := range []struct {
		args string
		code int
	}{
		{"gids --bogus --json", 2},
		{"gids --json --bogus", 2},
		{"demo -p abc --json", 2},
		{"smoke --timeout xyz --json", 2},
		{"serve --timeout xyz --json", 2},
		{"perf write_bw -s 99999999999999999999 --json", 1}, // perftest refuses options with 1
		{"devinfo --bogus --json", 2},
		{"devinfo --json --bogus", 2},
		{"devices --bogus -j", 2},
		{"ping -c --bogus --json", 22},
		{"rxe add --bogus -j", 2},
		{"--json", 2},
		{"rxe --json", 2},
		{"completion -j", 2},
		{"nosuchcommand --json", 2},
	} {
		f, out, errOut := newTestFactory()
		code := run(f, strings.Fields(tc.args))
		if code != tc.code {
			t.Errorf("%s: exit %d, want %d (stderr %q)", tc.args, code, tc.code, errOut)
		}
		var doc struct {
			OK    *bool `json:"ok"`
			Error struct {
				Message string `json:"message"`
				Code    int    `json:"code"`
			} `json:"error"`
		}
		dec := json.NewDecoder(strings.NewReader(out.String()))
		if err := dec.Decode(&doc); err != nil {
			t.Errorf("%s: stdout is not one JSON document: %v: %q", tc.args, err, out)
			continue
		}
		if dec.More() {
			t.Errorf("%s: more than one document on stdout: %q", tc.args, out)
		}
		if doc.OK == nil || *doc.OK || doc.Error.Code != tc.code || doc.Error.Message == "" {
			t.Errorf("%s: document %q, want ok false, code %d and a message", tc.args, out, tc.code)
		}
	}
}

// Without --json the same lines keep their text form.
func TestNoJSONWithoutTheFlag(t *testing.T) {
	isolateConfig(t)
	f, out, _ := newTestFactory()
	if code := run(f, []string{"ping", "-c", "--bogus"}); code != 22 || !strings.Contains(out.String(), "Usage:") {
		t.Errorf("ping -c --bogus: exit %d, stdout %q; want rping's usage and 22", code, out)
	}
	f, out, _ = newTestFactory()
	if code := run(f, nil); code != 0 || !strings.Contains(out.String(), "Available Commands") {
		t.Errorf("rdmactl: exit %d, stdout %q; want the help", code, out)
	}
}
