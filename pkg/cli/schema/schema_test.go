package schema

import (
	"strings"
	"testing"
)

func TestEverySchemaCompiles(t *testing.T) {
	if err := Compile(); err != nil {
		t.Fatal(err)
	}
	if len(Names()) < 16 {
		t.Errorf("schemas: %v", Names())
	}
}

// The schemas hold the contract's rules: lists are never null, the old
// names are gone, the verdict and error have one shape.
func TestSchemasRejectWhatTheContractForbids(t *testing.T) {
	for _, c := range []struct{ schema, doc, why string }{
		{"devices", `{"schema_version":2,"devices":null}`, "a null list"},
		{"devices", `{"schema_version":2,"devices":[{"name":"rxe0","node_guid":"0000:0000:0000:0001"}]}`, "name instead of device"},
		{"rxe-status", `{"schema_version":2,"netdevs":[{"netdev":"veth0","operstate":"UP","mtu":1500,"ipv4":[],"port_state":"ACTIVE"}]}`, "port_state"},
		{"rxe-status", `{"schema_version":2,"netdevs":[{"netdev":"veth0","operstate":"UP","mtu":1500,"ipv4":[],"state":"PORT_ACTIVE"}]}`, "PORT_ACTIVE"},
		{"demo", `{"schema_version":2,"role":"client","device":"rxe0","port":1,"tcp_port":19875,"gid_index":1,"gid_auto":false,"result":0,"elapsed_ms":1}`, "result instead of ok"},
		{"ping", `{"schema_version":2,"peer":"a","cm_port":1,"size":64,"count":1,"completed":0,"elapsed_ms":1,"rtt_ms":[],"ok":false,"error":"refused"}`, "a string error"},
		{"error", `{"schema_version":2,"ok":false,"error":{"message":"x"}}`, "no exit code"},
		{"error", `{"schema_version":1,"ok":false,"error":{"message":"x","code":1}}`, "schema_version 1"},
	} {
		if err := Validate(c.schema, []byte(c.doc)); err == nil {
			t.Errorf("%s accepts %s: %s", c.schema, c.why, c.doc)
		}
	}
	ok := `{"schema_version":2,"devices":[{"device":"rxe0","node_guid":"0000:0000:0000:0001"}]}`
	if err := Validate("devices", []byte(ok)); err != nil {
		t.Errorf("devices rejects a good document: %v", err)
	}
}

func TestValidateResult(t *testing.T) {
	errDoc := []byte(`{"schema_version":2,"ok":false,"error":{"message":"no RDMA device","code":1}}` + "\n")
	if err := ValidateResult("devinfo", errDoc, 1); err != nil {
		t.Errorf("a failed command's error document: %v", err)
	}
	if err := ValidateResult("devinfo", errDoc, 0); err == nil {
		t.Error("the error document passes for a command that exited 0")
	}
	two := []byte(`{"schema_version":2,"devices":[]}` + "\n" + `{"schema_version":2,"devices":[]}` + "\n")
	if err := ValidateResult("devices", two, 0); err == nil || !strings.Contains(err.Error(), "more than one") {
		t.Errorf("two documents: %v", err)
	}
}
