// Package cgoverbs is rdmactl's only cgo package (with internal/cvfake,
// the failing provider its tests run the C error paths over): small Go
// types over libibverbs and librdmacm that own their C resources and
// release them in Close. Everything above it is pure Go.
package cgoverbs

/*
#cgo LDFLAGS: -libverbs -lrdmacm
#include <stdlib.h>
#include <infiniband/verbs.h>
#include "cverrno.h"
*/
import "C"

import (
	"syscall"
	"unsafe"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// Device names a device as libibverbs lists it.
type Device struct {
	Name     string
	NodeGUID uint64 // host order, as ibv_get_device_guid's bytes read big-endian
}

// Devices lists the RDMA devices in libibverbs' order.
func Devices() ([]Device, error) {
	var n C.int
	list, err := C.ibv_get_device_list(&n)
	if list == nil {
		return nil, errnoErr("ibv_get_device_list", err, syscall.ENOMEM)
	}
	defer C.ibv_free_device_list(list)
	devs := unsafe.Slice(list, int(n))
	out := make([]Device, 0, len(devs))
	for _, d := range devs {
		guid := uint64(C.ibv_get_device_guid(d))
		out = append(out, Device{Name: C.GoString(C.ibv_get_device_name(d)), NodeGUID: be64toh(guid)})
	}
	return out, nil
}

// Context is an open device (struct ibv_context).
type Context struct {
	c     *C.struct_ibv_context
	owned bool // false when borrowed from an rdma_cm id
}

// Open opens the device called name; an unknown name is ENODEV.
func Open(name string) (*Context, error) {
	var n C.int
	list, err := C.ibv_get_device_list(&n)
	if list == nil {
		return nil, errnoErr("ibv_get_device_list", err, syscall.ENOMEM)
	}
	defer C.ibv_free_device_list(list)
	for _, d := range unsafe.Slice(list, int(n)) {
		if C.GoString(C.ibv_get_device_name(d)) != name {
			continue
		}
		ctx, err := C.ibv_open_device(d)
		if ctx == nil {
			return nil, errnoErr("ibv_open_device("+name+")", err, syscall.ENODEV)
		}
		return &Context{c: ctx, owned: true}, nil
	}
	return nil, rdma.Errorf("ibv_open_device("+name+")", syscall.ENODEV)
}

// Name is the device's name.
func (c *Context) Name() string { return C.GoString(C.ibv_get_device_name(c.c.device)) }

// Close closes the device if this Context opened it.
func (c *Context) Close() error {
	if c == nil || c.c == nil {
		return nil
	}
	var err error
	if c.owned {
		err = callErr("ibv_close_device", C.cv_neg(C.ibv_close_device(c.c)))
	}
	c.c = nil
	return err
}

// be64toh turns a big-endian value read as host order into its number.
func be64toh(v uint64) uint64 {
	var b [8]byte
	*(*uint64)(unsafe.Pointer(&b[0])) = v
	var r uint64
	for _, x := range b {
		r = r<<8 | uint64(x)
	}
	return r
}
