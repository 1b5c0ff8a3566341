// Package cvfake is a provider for tests of pkg/cgoverbs: a verbs context
// made in C whose posts and polls fail as the test says, with a QP, a CQ,
// an SRQ, an AH and a completion channel on it. With it the C helpers'
// error paths run, and reach Go, on a machine without an RDMA device.
package cvfake

// #cgo CFLAGS: -I${SRCDIR}/../..
// #cgo LDFLAGS: -libverbs
// #include <stdlib.h>
// #include "cvfake.h"
import "C"

import "unsafe"

// Provider is one failing context and its objects, in C memory.
type Provider struct{ f *C.struct_cvf }

// New makes a provider whose posts return postRC and polls pollRC, each
// after setting errno to errno, and whose CQ arming returns notifyRC.
func New(postRC, pollRC, notifyRC, errno int) *Provider {
	f := C.cvf_new(C.int(postRC), C.int(pollRC), C.int(notifyRC), C.int(errno))
	if f == nil {
		panic("cvfake: out of memory")
	}
	return &Provider{f: f}
}

// The objects, as the struct ibv_* pointers pkg/cgoverbs holds.
func (p *Provider) QP() unsafe.Pointer      { return unsafe.Pointer(&p.f.qp) }
func (p *Provider) CQ() unsafe.Pointer      { return unsafe.Pointer(&p.f.cq) }
func (p *Provider) CQState() unsafe.Pointer { return unsafe.Pointer(&p.f.st) }
func (p *Provider) SRQ() unsafe.Pointer     { return unsafe.Pointer(&p.f.srq) }
func (p *Provider) AH() unsafe.Pointer      { return unsafe.Pointer(&p.f.ah) }
func (p *Provider) Channel() unsafe.Pointer { return unsafe.Pointer(&p.f.ch) }

// Free releases the provider; nothing may use its objects afterwards.
func (p *Provider) Free() { C.free(unsafe.Pointer(p.f)) }
