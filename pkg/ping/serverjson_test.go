package ping

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/rdmactl/rdmactl/pkg/cli/schema"
)

// `ping -s --json` prints one document when the server ends: the client
// it served, how many pings it echoed, and the verdict; rping's own lines
// (-v's ping data) go to stderr.
func TestServerJSON(t *testing.T) {
	a := "10.9.0.1"
	for _, c := range []struct {
		name     string
		srv, cli Options
		ok       bool
		pings    int
	}{
		{"served", opts("-a", a, "-v", true, "--json", true), opts("-a", a, "-C", 3), true, 3},
		{"size refused", opts("-a", a, "-S", 100, "--json", true), opts("-a", a, "-S", 1000, "-C", 3), false, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, _ := pair(t, fabric(), c.srv, c.cli)
			dec := json.NewDecoder(strings.NewReader(s.out))
			var doc struct {
				SchemaVersion int    `json:"schema_version"`
				Addr          string `json:"addr"`
				CMPort        int    `json:"cm_port"`
				Clients       []struct {
					Peer      string           `json:"peer"`
					Completed int              `json:"completed"`
					OK        bool             `json:"ok"`
					Error     *json.RawMessage `json:"error"`
				} `json:"clients"`
				OK    bool `json:"ok"`
				Error *struct {
					Message string `json:"message"`
					Code    int    `json:"code"`
				} `json:"error"`
			}
			if err := dec.Decode(&doc); err != nil || dec.More() {
				t.Fatalf("server stdout is not one JSON document (%v):\n%s", err, s.out)
			}
			if doc.SchemaVersion == 0 || doc.Addr != a || doc.CMPort == 0 || len(doc.Clients) != 1 || doc.OK != c.ok {
				t.Fatalf("document %s", s.out)
			}
			if err := schema.Validate("ping-server", []byte(s.out)); err != nil {
				t.Errorf("against its schema: %v", err)
			}
			cl := doc.Clients[0]
			if cl.Peer == "" || cl.Completed != c.pings || cl.OK != c.ok || (cl.Error == nil) == !c.ok {
				t.Errorf("client entry %s", s.out)
			}
			if c.ok && (s.code != 0 || doc.Error != nil || !strings.Contains(s.err, "server ping data: ")) {
				t.Errorf("exit %d, stderr %q, document %s", s.code, s.err, s.out)
			}
			if !c.ok && (s.code == 0 || doc.Error == nil || doc.Error.Code != s.code || doc.Error.Message == "") {
				t.Errorf("exit %d, document %s", s.code, s.out)
			}
		})
	}
}
