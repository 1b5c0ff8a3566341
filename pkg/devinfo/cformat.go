package devinfo

import (
	"fmt"
	"math"
	"strings"
)

// formatIPv6 writes 16 bytes the way glibc's inet_ntop(AF_INET6) does,
// which differs from net/netip: IPv4-mapped and IPv4-compatible addresses
// keep their "::ffff:" / "::" prefix before the dotted quad.
func formatIPv6(a [16]byte) string {
	var words [8]uint16
	for i := range words {
		words[i] = uint16(a[2*i])<<8 | uint16(a[2*i+1])
	}
	// The longest run of zero words (the first one on a tie) becomes "::",
	// but only when it is at least two words long.
	bestBase, bestLen := -1, 0
	for i := 0; i < 8; {
		if words[i] != 0 {
			i++
			continue
		}
		j := i
		for j < 8 && words[j] == 0 {
			j++
		}
		if j-i > bestLen {
			bestBase, bestLen = i, j-i
		}
		i = j
	}
	if bestLen < 2 {
		bestBase = -1
	}

	var b strings.Builder
	for i := 0; i < 8; i++ {
		if bestBase >= 0 && i >= bestBase && i < bestBase+bestLen {
			if i == bestBase {
				b.WriteByte(':')
			}
			continue
		}
		if i != 0 {
			b.WriteByte(':')
		}
		if i == 6 && bestBase == 0 && (bestLen == 6 || (bestLen == 5 && words[5] == 0xffff)) {
			fmt.Fprintf(&b, "%d.%d.%d.%d", a[12], a[13], a[14], a[15])
			return b.String()
		}
		fmt.Fprintf(&b, "%x", words[i])
	}
	if bestBase >= 0 && bestBase+bestLen == 8 {
		b.WriteByte(':')
	}
	return b.String()
}

// cStrtol reads s as strtol(s, NULL, 0) does on LP64 Linux: leading
// space, a sign, then a hex (0x), octal (0) or decimal number, stopping
// at the first character that does not belong; no digits gives 0 and an
// out-of-range value saturates.
func cStrtol(s string) int64 {
	i := 0
	for i < len(s) && strings.IndexByte(" \t\n\v\f\r", s[i]) >= 0 {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	base := uint64(10)
	switch {
	case i+2 < len(s) && s[i] == '0' && (s[i+1] == 'x' || s[i+1] == 'X') && digitValue(s[i+2]) < 16:
		base = 16
		i += 2
	case i < len(s) && s[i] == '0':
		base = 8
	}
	var v uint64
	overflow := false
	for ; i < len(s); i++ {
		d := uint64(digitValue(s[i]))
		if d >= base {
			break
		}
		if v > (math.MaxUint64-d)/base {
			overflow = true
		}
		v = v*base + d
	}
	switch {
	case neg && (overflow || v > 1<<63):
		return math.MinInt64
	case !neg && (overflow || v > math.MaxInt64):
		return math.MaxInt64
	case neg:
		return -int64(v)
	}
	return int64(v)
}

func digitValue(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'z':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'Z':
		return int(c-'A') + 10
	}
	return 99
}
