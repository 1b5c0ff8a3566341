package devinfo

import (
	"math"
	"strings"
)

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
