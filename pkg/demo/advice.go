package demo

import (
	"fmt"
	"net"
	"net/netip"

	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// GID choice (-g auto) and rdmactl's hints. A hint follows from what was
// observed; where the cause is unknown it says what was seen and points
// at `rdmactl doctor`.

// chooseGID resolves -g auto with the one rule of pkg/rdma: the RoCE v2
// entry carrying the address of this end of the TCP connection, which is
// the address the peer reaches.
func (r *runner) chooseGID() bool {
	local := netip.Addr{}
	if ta, ok := r.conn.LocalAddr().(*net.TCPAddr); ok {
		local, _ = netip.AddrFromSlice(ta.IP)
		local = local.Unmap()
	}
	table, err := rdma.GIDTable(r.dev, uint8(r.opts.IBPort))
	var e rdma.GIDEntry
	ok := false
	if err == nil {
		e, ok = rdma.ChooseGID(table, rdma.RoCEv2, local)
	}
	if !ok {
		r.fail("could not choose a GID index: no RoCE v2 GID of %s port %d carries %s, the address of this end of the TCP connection", r.opts.Device, r.opts.IBPort, local)
		r.hint(fmt.Sprintf("the device must sit on the interface that has %s; see 'rdmactl gids' for which device carries it, then pass -d", local))
		return false
	}
	r.opts.GRH, r.opts.GIDIndex = true, int(e.Index)
	r.printf("GID index auto: %d (%s %s, this end of the TCP connection)\n", e.Index, e.Type, local)
	return true
}

// completionAdvice explains a failed completion of op from its status.
// Only statuses that say packets did not get through (retries exhausted)
// lead to the GIDs; the others say what the status means.
func (r *runner) completionAdvice(op string, c rdma.WC) string {
	what := fmt.Sprintf("the %s failed with status 0x%x (%s)", op, uint32(c.Status), c.Status)
	switch c.Status {
	case rdma.WCRetryExcErr:
		return r.gidAdvice(what + ": the peer never acknowledged, so packets are not getting through")
	case rdma.WCRemAccessErr:
		return fmt.Sprintf("%s: the peer refused the access; the buffer address 0x%x and rkey 0x%x it sent do not name memory it registered for remote access; check the peer's connection record", what, r.remote.Addr, r.remote.RKey)
	case rdma.WCLocLenErr:
		return fmt.Sprintf("%s: a message was longer than the receive buffer posted for it", what)
	case rdma.WCRemInvReqErr, rdma.WCRemOpErr:
		return fmt.Sprintf("%s: the peer could not carry out the request (on a receive, its buffer may be shorter than the message); see the peer's output", what)
	}
	return fmt.Sprintf("%s; run 'rdmactl doctor' on both hosts", what)
}

// gidType is the type of the local GID entry in use, 0 (IB) when unknown.
func (r *runner) gidType() rdma.GIDType {
	e, err := r.dev.QueryGIDEntry(uint8(r.opts.IBPort), uint32(r.opts.GIDIndex))
	if err != nil {
		return rdma.GIDTypeIB
	}
	return e.Type
}

// gidAdvice names the likely reason the peers cannot reach each other,
// for failures that say so (RTR refused, nothing acknowledged).
func (r *runner) gidAdvice(what string) string {
	see := fmt.Sprintf("see 'rdmactl gids -d %s', or use -g auto on both sides", r.opts.Device)
	remote := r.remote.GID
	_, localV4 := r.gid.IPv4()
	_, remoteV4 := remote.IPv4()
	switch {
	case !r.opts.GRH:
		return fmt.Sprintf("%s with the peer addressed by LID 0x%x only (no -g): on InfiniBand check the subnet manager and LIDs; on RoCE both sides need a GID index; %s", what, r.remote.LID, see)
	case r.gid.IsLinkLocal():
		return fmt.Sprintf("%s: local GID index %d is the link-local entry %s, which RoCE cannot route to the peer; %s", what, r.opts.GIDIndex, r.gid, see)
	case r.gidType() == rdma.GIDTypeRoCEv1:
		return fmt.Sprintf("%s: local GID index %d is a RoCE v1 entry; use the RoCE v2 one of the same address; %s", what, r.opts.GIDIndex, see)
	case remote.IsZero():
		return fmt.Sprintf("%s: the peer sent no GID (it ran without -g); %s", what, see)
	case remote.IsLinkLocal():
		return fmt.Sprintf("%s: the peer's GID %s is its link-local entry; the peer needs the RoCE v2 GID of its IP address; %s", what, remote, see)
	case remoteV4 != localV4:
		return fmt.Sprintf("%s: the GIDs differ in kind (local %s, peer %s): both must be RoCE v2 GIDs of the same IP family; %s", what, r.gid, remote, see)
	}
	return fmt.Sprintf("%s: check that both sides use RoCE v2 GIDs of the addresses they reach each other on (local %s, peer %s); %s", what, r.gid, remote, see)
}
