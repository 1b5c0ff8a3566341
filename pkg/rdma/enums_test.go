package rdma

import (
	"encoding/json"
	"testing"
)

// JSON spells port states as `rdma link -j` does and carries MTUs and VL
// counts as numbers; text keeps ibv_devinfo's words. Values without a
// name or quantity read back unchanged.
func TestEnumJSONNames(t *testing.T) {
	attr := PortAttr{State: 4, PhysState: 5, MaxMTU: MTU4096, ActiveMTU: MTU1024, MaxVLNum: 3}
	b, err := json.Marshal(attr)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]any{"state": "ACTIVE", "physical_state": "LINK_UP", "max_mtu": 4096.0, "active_mtu": 1024.0, "max_vl_num": 4.0} {
		if m[k] != want {
			t.Errorf("%s = %v, want %v", k, m[k], want)
		}
	}
	if attr.State.String() != "PORT_ACTIVE" || attr.ActiveMTU.String() != "1024" || attr.PhysState.String() != "LINK_UP" {
		t.Errorf("text words changed: %s %s %s", attr.State, attr.ActiveMTU, attr.PhysState)
	}
	var back PortAttr
	if err := json.Unmarshal(b, &back); err != nil || back != attr {
		t.Errorf("read back %+v (%v), want %+v", back, err, attr)
	}
	for _, v := range []MTU{0, 6} {
		b, _ := v.MarshalJSON()
		var r MTU
		if err := r.UnmarshalJSON(b); err != nil || r != v || string(b) == "0" && v != 0 {
			t.Errorf("MTU code %d: JSON %s read back as %d (%v)", v, b, r, err)
		}
	}
}
