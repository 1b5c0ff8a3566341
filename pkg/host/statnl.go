package host

import (
	"fmt"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// ReadNetlinkCounters asks RDMA netlink for the hw counters of every port
// of every device, one request a port as iproute2's `rdma statistic show`
// does, and keeps the kernel's order of devices and counters.
func ReadNetlinkCounters() ([]PortCounters, error) {
	links, err := netlink.RdmaLinkList()
	if err != nil {
		return nil, err
	}
	var out []PortCounters
	for _, l := range links {
		for port := uint32(1); port <= l.Attrs.NumPorts; port++ {
			msg, err := statRequest(l.Attrs.Index, port)
			if err != nil {
				return nil, fmt.Errorf("%s/%d: %w", l.Attrs.Name, port, err)
			}
			pc, err := ParseStatReply(msg)
			if err != nil {
				return nil, fmt.Errorf("%s/%d: %w", l.Attrs.Name, port, err)
			}
			out = append(out, pc)
		}
	}
	return out, nil
}

func statRequest(devIndex, port uint32) ([]byte, error) {
	req := nl.NewNetlinkRequest(nl.RDMA_NL_NLDEV<<nl.RDMA_NL_GET_CLIENT_SHIFT|nl.RDMA_NLDEV_CMD_STAT_GET, unix.NLM_F_ACK)
	req.AddData(nl.NewRtAttr(nl.RDMA_NLDEV_ATTR_DEV_INDEX, nl.Uint32Attr(devIndex)))
	req.AddData(nl.NewRtAttr(nl.RDMA_NLDEV_ATTR_PORT_INDEX, nl.Uint32Attr(port)))
	msgs, err := req.Execute(unix.NETLINK_RDMA, 0)
	if err != nil {
		return nil, err
	}
	if len(msgs) != 1 {
		return nil, fmt.Errorf("RDMA netlink answered %d messages to a statistics request, want 1", len(msgs))
	}
	return msgs[0], nil
}

// ParseStatReply decodes the attributes of an RDMA_NLDEV_CMD_STAT_GET
// answer for one port: device name, port index and the hw counters in the
// order the kernel sent them.
func ParseStatReply(msg []byte) (PortCounters, error) {
	var pc PortCounters
	attrs, err := nl.ParseRouteAttr(msg)
	if err != nil {
		return pc, err
	}
	for _, a := range attrs {
		switch a.Attr.Type & nl.NLA_TYPE_MASK {
		case nl.RDMA_NLDEV_ATTR_DEV_NAME:
			pc.Device = cString(a.Value)
		case nl.RDMA_NLDEV_ATTR_PORT_INDEX:
			if len(a.Value) < 4 {
				return pc, fmt.Errorf("port index of %d bytes", len(a.Value))
			}
			pc.Port = int(nl.NativeEndian().Uint32(a.Value))
		case nl.RDMA_NLDEV_ATTR_STAT_HWCOUNTERS:
			if pc.HW, err = parseHWCounters(a.Value); err != nil {
				return pc, err
			}
		}
	}
	if pc.Device == "" || pc.Port == 0 {
		return pc, fmt.Errorf("statistics answer without device name or port")
	}
	return pc, nil
}

func parseHWCounters(b []byte) ([]Counter, error) {
	entries, err := nl.ParseRouteAttr(b)
	if err != nil {
		return nil, err
	}
	cs := make([]Counter, 0, len(entries))
	for _, e := range entries {
		if e.Attr.Type&nl.NLA_TYPE_MASK != nl.RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY {
			continue
		}
		fields, err := nl.ParseRouteAttr(e.Value)
		if err != nil {
			return nil, err
		}
		var c Counter
		var named, valued bool
		for _, f := range fields {
			switch f.Attr.Type & nl.NLA_TYPE_MASK {
			case nl.RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME:
				c.Name, named = cString(f.Value), true
			case nl.RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE:
				if len(f.Value) < 8 {
					return nil, fmt.Errorf("counter value of %d bytes", len(f.Value))
				}
				c.Value, valued = nl.NativeEndian().Uint64(f.Value), true
			}
		}
		if !named || !valued {
			return nil, fmt.Errorf("hw counter entry without name or value")
		}
		cs = append(cs, c)
	}
	return cs, nil
}

func cString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}
