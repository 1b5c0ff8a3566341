package doctor

import (
	"strconv"
	"strings"
)

// RoCEPort is the UDP destination port of every RoCE v2 packet.
const RoCEPort = 4791

// DropRule is a firewall rule that drops or rejects RoCE v2 traffic.
type DropRule struct {
	Chain string `json:"chain"`
	Rule  string `json:"rule"`
}

// rule is what matters about one firewall rule for UDP port 4791.
type rule struct {
	chain   string
	text    string
	verdict string // "drop" (DROP, REJECT, reject), "accept" or ""
	udp     bool   // matches UDP (or any transport protocol with a port)
	ports   []portRange
	anyPort bool // no destination-port condition
	negPort bool // the port condition is negated
	// unknown marks a condition that cannot be judged here (a named set,
	// a service name, a source port) so the rule is left out.
	unknown bool
	// narrowed marks further conditions (interface, address, state…) that
	// make an ACCEPT too narrow to count as letting RoCE through.
	narrowed bool
}

type portRange struct{ lo, hi int }

func (r rule) matchesRoCE() bool {
	if !r.udp || r.unknown {
		return false
	}
	if r.anyPort {
		return true
	}
	in := false
	for _, p := range r.ports {
		if p.lo <= RoCEPort && RoCEPort <= p.hi {
			in = true
		}
	}
	return in != r.negPort
}

// roceDrops walks each chain in order: a DROP/REJECT that matches UDP 4791
// counts unless an unconditional ACCEPT of UDP 4791 came before it.
func roceDrops(rules []rule) []DropRule {
	accepted := map[string]bool{}
	var out []DropRule
	for _, r := range rules {
		if !r.matchesRoCE() {
			continue
		}
		switch r.verdict {
		case "accept":
			if !r.narrowed {
				accepted[r.chain] = true
			}
		case "drop":
			if !accepted[r.chain] {
				out = append(out, DropRule{Chain: r.chain, Rule: r.text})
			}
		}
	}
	return out
}

// IptablesDrops finds the rules in iptables-save output that drop RoCE v2.
func IptablesDrops(save string) []DropRule {
	var rules []rule
	table := ""
	for _, line := range strings.Split(save, "\n") {
		line = strings.TrimSpace(line)
		if t, ok := strings.CutPrefix(line, "*"); ok {
			table = t
			continue
		}
		if !strings.HasPrefix(line, "-A ") {
			continue
		}
		rules = append(rules, parseIptablesRule(table, line))
	}
	return roceDrops(rules)
}

func parseIptablesRule(table, line string) rule {
	tok := splitWords(line)
	r := rule{text: line, anyPort: true}
	neg := false
	jumped := false
	for i := 0; i < len(tok); i++ {
		t := tok[i]
		next := func() string {
			if i+1 < len(tok) {
				i++
				return tok[i]
			}
			return ""
		}
		switch t {
		case "!":
			neg = true
			continue
		case "-A", "--append":
			r.chain = table + "/" + next()
		case "-p", "--protocol":
			p := strings.ToLower(next())
			r.udp = (p == "udp" || p == "17") && !neg
		case "--dport", "--destination-port", "--dports", "--destination-ports", "--ports":
			r.anyPort = false
			r.negPort = neg
			r.ports, r.unknown = parsePorts(next(), ",", ":", r.unknown)
		case "--sport", "--source-port", "--sports", "--source-ports":
			next()
			r.unknown = true
		case "-m", "--match", "--comment":
			next()
		case "-j", "--jump":
			switch next() {
			case "DROP", "REJECT":
				r.verdict = "drop"
			case "ACCEPT":
				r.verdict = "accept"
			}
			jumped = true
		default:
			if strings.HasPrefix(t, "-") && !jumped {
				r.narrowed = true
			}
		}
		neg = false
	}
	return r
}

// NftDrops finds the rules in `nft list ruleset` output that drop RoCE v2.
func NftDrops(ruleset string) []DropRule {
	var rules []rule
	table, chain := "", ""
	for _, line := range strings.Split(ruleset, "\n") {
		tok := splitWords(strings.TrimSpace(line))
		if len(tok) == 0 {
			continue
		}
		switch {
		case tok[0] == "table" && len(tok) >= 3:
			table = strings.Join(tok[1:3], " ")
			continue
		case tok[0] == "chain" && len(tok) >= 2:
			chain = tok[1]
			continue
		case tok[0] == "}" || tok[0] == "type" || tok[0] == "policy" || tok[0] == "set" || tok[0] == "elements":
			continue
		}
		rules = append(rules, parseNftRule(table+"/"+chain, strings.TrimSpace(line), tok))
	}
	return roceDrops(rules)
}

// nftNeutral are words that neither narrow a rule nor change its verdict.
var nftNeutral = map[string]bool{
	"meta": true, "l4proto": true, "ip": true, "ip6": true, "protocol": true, "nexthdr": true,
	"udp": true, "th": true, "counter": true, "packets": true, "bytes": true,
	"drop": true, "reject": true, "accept": true, "with": true, "icmp": true, "icmpv6": true,
	"icmpx": true, "type": true, "port-unreachable": true, "admin-prohibited": true, "comment": true,
}

func parseNftRule(chain, line string, tok []string) rule {
	r := rule{chain: chain, text: line, anyPort: true}
	for i := 0; i < len(tok); i++ {
		t := tok[i]
		switch {
		case t == "udp" || (t == "th" && i+1 < len(tok) && tok[i+1] == "dport"):
			r.udp = true
		case t == "drop" || t == "reject":
			r.verdict = "drop"
		case t == "accept":
			r.verdict = "accept"
		case t == "comment":
			i++
		case t == "sport":
			r.unknown = true
		case t == "dport":
			r.anyPort = false
			j := i + 1
			if j < len(tok) && (tok[j] == "!=" || tok[j] == "!") {
				r.negPort = true
				j++
			}
			spec := ""
			if j < len(tok) && tok[j] == "{" {
				for j++; j < len(tok) && tok[j] != "}"; j++ {
					spec += tok[j]
				}
			} else if j < len(tok) {
				spec = tok[j]
			}
			r.ports, r.unknown = parsePorts(strings.TrimSuffix(spec, ","), ",", "-", r.unknown)
			i = j
		case nftNeutral[t] || isNumber(t):
		default:
			r.narrowed = true
		}
	}
	return r
}

// parsePorts reads "4791", "4000<rangeSep>5000" and lists joined by listSep.
// Anything else (a service name, a named set) makes the rule unknown.
func parsePorts(spec, listSep, rangeSep string, unknown bool) ([]portRange, bool) {
	var out []portRange
	for _, part := range strings.Split(spec, listSep) {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, rangeSep)
		if !isRange {
			hi = lo
		}
		l, err1 := strconv.Atoi(lo)
		h, err2 := strconv.Atoi(hi)
		if err1 != nil || err2 != nil {
			return nil, true
		}
		out = append(out, portRange{l, h})
	}
	if len(out) == 0 {
		return nil, true
	}
	return out, unknown
}

func isNumber(s string) bool {
	_, err := strconv.Atoi(s)
	return err == nil
}

// splitWords splits a rule into words, keeping "double quoted" text
// (comments) as one word.
func splitWords(s string) []string {
	var out []string
	var cur strings.Builder
	inQuote, have := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && inQuote && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
		case c == '"':
			inQuote = !inQuote
			have = true
		case (c == ' ' || c == '\t') && !inQuote:
			if have {
				out = append(out, cur.String())
				cur.Reset()
				have = false
			}
		default:
			cur.WriteByte(c)
			have = true
		}
	}
	if have {
		out = append(out, cur.String())
	}
	return out
}
