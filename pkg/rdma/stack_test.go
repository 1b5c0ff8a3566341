package rdma

import (
	"errors"
	"syscall"
	"testing"
)

// slotDevice answers QueryGIDEntry from its slots (ErrNoGID where none,
// bad's error where set) and counts the queries.
type slotDevice struct {
	Device
	slots    map[uint32]GIDEntry
	bad      map[uint32]error
	tableErr error // tableDevice's ReadGIDTable fails with it
	queries  int
}

func (d *slotDevice) QueryGIDEntry(port uint8, index uint32) (GIDEntry, error) {
	d.queries++
	if err := d.bad[index]; err != nil {
		return GIDEntry{}, err
	}
	e, ok := d.slots[index]
	if !ok {
		return GIDEntry{}, ErrNoGID
	}
	return e, nil
}

// tableDevice also reads the whole table at once.
type tableDevice struct{ *slotDevice }

func (d tableDevice) ReadGIDTable(port uint8, tblLen int32) ([]GIDEntry, error) {
	if d.tableErr != nil {
		return nil, d.tableErr
	}
	return []GIDEntry{d.slots[1], d.slots[5]}, nil
}

func TestReadGIDs(t *testing.T) {
	slots := map[uint32]GIDEntry{1: {Index: 1}, 5: {Index: 5}}
	indexes := func(es []GIDEntry) (out []uint32) {
		for _, e := range es {
			out = append(out, e.Index)
		}
		return out
	}

	// one call where the device can
	d := &slotDevice{slots: slots}
	got, err := ReadGIDs(tableDevice{d}, 1, 8)
	if err != nil || len(got) != 2 || d.queries != 0 {
		t.Fatalf("table read: %v %v after %d slot queries", indexes(got), err, d.queries)
	}

	// slot by slot when that call fails (a kernel without it) or is missing
	for _, dev := range []Device{tableDevice{&slotDevice{slots: slots, tableErr: syscall.EOPNOTSUPP}}, &slotDevice{slots: slots}} {
		got, err := ReadGIDs(dev, 1, 8)
		if err != nil || len(got) != 2 || got[0].Index != 1 || got[1].Index != 5 {
			t.Fatalf("slot by slot: %v %v", indexes(got), err)
		}
	}

	// an unreadable slot ends it, naming the slot, with what came before
	d = &slotDevice{slots: slots, bad: map[uint32]error{3: syscall.EIO}}
	got, err = ReadGIDs(d, 2, 8)
	var se *GIDSlotError
	if !errors.As(err, &se) || se.Port != 2 || se.Index != 3 || !errors.Is(err, syscall.EIO) || len(got) != 1 {
		t.Fatalf("bad slot: %v %v", indexes(got), err)
	}

	// an empty table is an empty list, not nil (JSON's [])
	if got, err := ReadGIDs(&slotDevice{}, 1, 4); got == nil || len(got) != 0 || err != nil {
		t.Fatalf("empty table: %#v %v", got, err)
	}
}
