package rdma

import "fmt"

// WCError is a work completion that came back with an error status, as the
// batched data paths report it.
type WCError struct {
	Status    WCStatus
	VendorErr uint32
}

func (e *WCError) Error() string {
	return fmt.Sprintf("completion with error: %s (status %d, vendor error 0x%x)", e.Status, uint32(e.Status), e.VendorErr)
}
