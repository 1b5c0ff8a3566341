package rdma

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// Enumerations of the verbs API. Each has the name ibv_devinfo prints for
// it (String). JSON carries a name too, or the bare number for a value the
// name table does not know, so that JSON reads back into the same value;
// port states are spelled as `rdma link -j` spells them (ACTIVE, LINK_UP),
// which is how every rdmactl document names them, and MTUs and VL counts
// are numbers (bytes, lanes) rather than ibv_devinfo's words.

// Transport is enum ibv_transport_type.
type Transport int32

// PortState is enum ibv_port_state.
type PortState uint32

// PortActive is IBV_PORT_ACTIVE.
const PortActive PortState = 4

// MTU is enum ibv_mtu (1 = 256 bytes … 5 = 4096 bytes).
type MTU uint32

// VLCount is the max_vl_num encoding (1 = 1 VL … 5 = 15 VLs).
type VLCount uint8

// Width is the active_width encoding (1 = 1X, 2 = 4X, …).
type Width uint8

// Speed is the active_speed encoding (1 = 2.5 Gbps per lane, …).
type Speed uint8

// PhysState is the port's physical state (1 = SLEEP … 7 = PHY TEST).
type PhysState uint8

// LinkLayer is IBV_LINK_LAYER_*.
type LinkLayer uint8

// AtomicCap is enum ibv_atomic_cap.
type AtomicCap uint32

// GIDType is enum ibv_gid_type: what a GID is for.
type GIDType uint32

// Values used outside formatting.
const (
	TransportIB Transport = 0

	LinkLayerUnspecified LinkLayer = 0
	LinkLayerInfiniBand  LinkLayer = 1
	LinkLayerEthernet    LinkLayer = 2

	MTU256  MTU = 1
	MTU1024 MTU = 3
	MTU4096 MTU = 5

	GIDTypeIB     GIDType = 0
	GIDTypeRoCEv1 GIDType = 1
	GIDTypeRoCEv2 GIDType = 2
)

var (
	transportNames = names[Transport]{0: "InfiniBand", 1: "iWARP", 2: "usNIC", 3: "usNIC UDP", 4: "unspecified"}
	portStateNames = names[PortState]{1: "PORT_DOWN", 2: "PORT_INIT", 3: "PORT_ARMED", 4: "PORT_ACTIVE"}
	// iproute2's rdma tool names (link_state_to_str, phys_state_to_str).
	portStateJSON = names[PortState]{0: "NOP", 1: "DOWN", 2: "INIT", 3: "ARMED", 4: "ACTIVE", 5: "ACTIVE_DEFER"}
	physStateJSON = names[PhysState]{0: "NOP", 1: "SLEEP", 2: "POLLING", 3: "DISABLED", 4: "ARMED", 5: "LINK_UP",
		6: "LINK_ERROR_RECOVER", 7: "PHY_TEST", 9: "OPA_OFFLINE", 11: "OPA_TEST"}
	mtuBytes   = numbers[MTU]{1: 256, 2: 512, 3: 1024, 4: 2048, 5: 4096}
	vlCounts   = numbers[VLCount]{1: 1, 2: 2, 3: 4, 4: 8, 5: 15}
	mtuNames   = names[MTU]{1: "256", 2: "512", 3: "1024", 4: "2048", 5: "4096"}
	vlNames    = names[VLCount]{1: "1", 2: "2", 3: "4", 4: "8", 5: "15"}
	widthNames = names[Width]{1: "1X", 2: "4X", 4: "8X", 8: "12X", 16: "2X"}
	// ibv_devinfo prints 10.0 Gbps for both QDR and FDR10, so JSON uses
	// the InfiniBand rate names, which tell them apart.
	speedTexts = names[Speed]{1: "2.5 Gbps", 2: "5.0 Gbps", 4: "10.0 Gbps", 8: "10.0 Gbps", 16: "14.0 Gbps",
		32: "25.0 Gbps", 64: "50.0 Gbps", 128: "100.0 Gbps"}
	speedNames     = names[Speed]{1: "SDR", 2: "DDR", 4: "QDR", 8: "FDR10", 16: "FDR", 32: "EDR", 64: "HDR", 128: "NDR"}
	physStateNames = names[PhysState]{1: "SLEEP", 2: "POLLING", 3: "DISABLED", 4: "PORT_CONFIGURATION TRAINNING",
		5: "LINK_UP", 6: "LINK_ERROR_RECOVERY", 7: "PHY TEST"}
	linkLayerNames = names[LinkLayer]{0: "Unspecified", 1: "InfiniBand", 2: "Ethernet"}
	atomicNames    = names[AtomicCap]{0: "ATOMIC_NONE", 1: "ATOMIC_HCA", 2: "ATOMIC_GLOB"}
	gidTypeNames   = names[GIDType]{0: "IB", 1: "RoCE v1", 2: "RoCE v2"}
)

func (v Transport) String() string { return transportNames.or(v, "invalid transport") }
func (v PortState) String() string { return portStateNames.or(v, "invalid state") }
func (v MTU) String() string       { return mtuNames.or(v, "invalid MTU") }
func (v VLCount) String() string   { return vlNames.or(v, "invalid value") }

// Width's fallback keeps the X that ibv_devinfo appends to every width.
func (v Width) String() string     { return widthNames.or(v, "invalid widthX") }
func (v Speed) String() string     { return speedTexts.or(v, "invalid speed") }
func (v PhysState) String() string { return physStateNames.or(v, "invalid physical state") }
func (v LinkLayer) String() string { return linkLayerNames.or(v, "Unknown") }
func (v AtomicCap) String() string { return atomicNames.or(v, "invalid atomic capability") }
func (v GIDType) String() string   { return gidTypeNames.or(v, "unknown GID type") }

func (v Transport) MarshalJSON() ([]byte, error)  { return transportNames.marshal(v) }
func (v *Transport) UnmarshalJSON(b []byte) error { return transportNames.unmarshal(b, v) }
func (v PortState) MarshalJSON() ([]byte, error)  { return portStateJSON.marshal(v) }
func (v *PortState) UnmarshalJSON(b []byte) error { return portStateJSON.unmarshal(b, v) }
func (v MTU) MarshalJSON() ([]byte, error)        { return mtuBytes.marshal(v) }
func (v *MTU) UnmarshalJSON(b []byte) error       { return mtuBytes.unmarshal(b, v) }
func (v VLCount) MarshalJSON() ([]byte, error)    { return vlCounts.marshal(v) }
func (v *VLCount) UnmarshalJSON(b []byte) error   { return vlCounts.unmarshal(b, v) }
func (v Width) MarshalJSON() ([]byte, error)      { return widthNames.marshal(v) }
func (v *Width) UnmarshalJSON(b []byte) error     { return widthNames.unmarshal(b, v) }
func (v Speed) MarshalJSON() ([]byte, error)      { return speedNames.marshal(v) }
func (v *Speed) UnmarshalJSON(b []byte) error     { return speedNames.unmarshal(b, v) }
func (v PhysState) MarshalJSON() ([]byte, error)  { return physStateJSON.marshal(v) }
func (v *PhysState) UnmarshalJSON(b []byte) error { return physStateJSON.unmarshal(b, v) }
func (v LinkLayer) MarshalJSON() ([]byte, error)  { return linkLayerNames.marshal(v) }
func (v *LinkLayer) UnmarshalJSON(b []byte) error { return linkLayerNames.unmarshal(b, v) }
func (v AtomicCap) MarshalJSON() ([]byte, error)  { return atomicNames.marshal(v) }
func (v *AtomicCap) UnmarshalJSON(b []byte) error { return atomicNames.unmarshal(b, v) }
func (v GIDType) MarshalJSON() ([]byte, error)    { return gidTypeNames.marshal(v) }
func (v *GIDType) UnmarshalJSON(b []byte) error   { return gidTypeNames.unmarshal(b, v) }

type integer interface {
	~int32 | ~uint32 | ~uint8
}

// names maps the values of one enumeration to their names.
type names[T integer] map[T]string

func (n names[T]) or(v T, fallback string) string {
	if s, ok := n[v]; ok {
		return s
	}
	return fallback
}

func (n names[T]) marshal(v T) ([]byte, error) {
	if s, ok := n[v]; ok {
		return json.Marshal(s)
	}
	return []byte(strconv.FormatInt(int64(v), 10)), nil
}

func (n names[T]) unmarshal(b []byte, v *T) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		var num int64
		if err := json.Unmarshal(b, &num); err != nil {
			return fmt.Errorf("want a name or a number, got %s", b)
		}
		*v = T(num)
		return nil
	}
	for k, name := range n {
		if name == s {
			*v = k
			return nil
		}
	}
	return fmt.Errorf("unknown name %q", s)
}

// numbers maps the values of an encoded quantity (MTU, VL count) to the
// quantity. JSON carries the quantity; a value without one is carried as
// its raw code with the sign flipped (-6), so that it reads back and never
// passes for a quantity.
type numbers[T integer] map[T]int

func (n numbers[T]) marshal(v T) ([]byte, error) {
	if q, ok := n[v]; ok {
		return []byte(strconv.Itoa(q)), nil
	}
	return []byte(strconv.FormatInt(-int64(v), 10)), nil
}

func (n numbers[T]) unmarshal(b []byte, v *T) error {
	var q int64
	if err := json.Unmarshal(b, &q); err != nil {
		return fmt.Errorf("want a number, got %s", b)
	}
	if q <= 0 {
		*v = T(-q)
		return nil
	}
	for k, want := range n {
		if int64(want) == q {
			*v = k
			return nil
		}
	}
	return fmt.Errorf("no code for %d", q)
}
