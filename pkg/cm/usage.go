package cm

import "strings"

// usages are the C tools' usage texts, printed on stdout for a bad option.
var usages = map[string][]string{
	"udaddy": {"[-s server_address]", "[-b bind_address]", "[-f address_format]", "    name, ip, ipv6, or gid",
		"[-P port_space]", "    udp or ipoib", "[-c connections]", "[-C message_count]", "[-S message_size]",
		"[-t type_of_service]", "[-p port_space - 0x111 for UDP (default), 0x2 for IPOIB]"},
	"ucmatose": {"[-s server_address]", "[-b bind_address]", "[-f address_format]", "    name, ip, ipv6, or gid",
		"[-P port_space]", "    tcp or ib", "[-c connections]", "[-C message_count]", "[-S message_size]",
		"[-t type_of_service]", "[-p port_number]", "[-m(igrate)]", "[-a ack_timeout]"},
	"rdma_server": {"[-s server_address]", "[-p port_number]"},
	"rdma_client": {"[-s server_address]", "[-p port_number]"},
	"mckey": {"-m multicast_address", "[-M unmapped_multicast_address]", " replaces -m and requires -b",
		"[-s(ender)]", "[-b bind_address]", "[-c connections]", "[-C message_count]", "[-S message_size]",
		"[-p port_space - 0x111 for UDP (default), 0x2 for IPOIB]", "[-o join as a send-only full-member]",
		"[-l join without multicast loopback]"},
	"cmtime": {"[-s server_address]", "[-b bind_address]", "[-c connections]", "[-p port_number]",
		"[-r retries]", "[-t timeout_ms]"},
}

// Usage is the C tool's usage text, as it prints it for a bad option.
func Usage(tool string) string {
	var b strings.Builder
	b.WriteString("usage: " + tool + "\n")
	for _, l := range usages[tool] {
		b.WriteString("\t" + l + "\n")
	}
	return b.String()
}

// Strtol is strtol(s, NULL, 0) as the tools read -p and -t: leading
// space, a sign, 0x for hex and 0 for octal, and whatever follows the
// number ignored; no number is 0.
func Strtol(s string) int64 {
	i := 0
	for i < len(s) && (s[i] == ' ' || (s[i] >= '\t' && s[i] <= '\r')) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	base := int64(10)
	switch {
	case i+2 < len(s) && s[i] == '0' && (s[i+1] == 'x' || s[i+1] == 'X') && digit(s[i+2], 16) >= 0:
		base, i = 16, i+2
	case i < len(s) && s[i] == '0':
		base = 8
	}
	var v int64
	for ; i < len(s); i++ {
		d := digit(s[i], base)
		if d < 0 {
			break
		}
		if v > (1<<63-1-d)/base {
			v = 1<<63 - 1
			continue
		}
		v = v*base + d
	}
	if neg {
		return -v
	}
	return v
}

func digit(c byte, base int64) int64 {
	var d int64
	switch {
	case c >= '0' && c <= '9':
		d = int64(c - '0')
	case c >= 'a' && c <= 'f':
		d = int64(c-'a') + 10
	case c >= 'A' && c <= 'F':
		d = int64(c-'A') + 10
	default:
		return -1
	}
	if d >= base {
		return -1
	}
	return d
}
