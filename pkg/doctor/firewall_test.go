package doctor

import (
	"os"
	"path/filepath"
	"testing"
)

// The rule sets were made in the lab VM with iptables (nf_tables backend)
// and nft, and dumped with iptables-save and `nft list ruleset`.
func TestFirewallDropsOnLabRuleSets(t *testing.T) {
	tests := []struct {
		name string
		// chains with a RoCE-dropping rule, per tool
		iptables, nft []string
	}{
		{"ipt-accept-then-drop-udp", nil, nil},
		{"ipt-multiport-reject", []string{"filter/INPUT"}, []string{"ip filter/INPUT"}},
		{"ipt-neg-port", nil, nil},
		{"ipt-tcp", nil, nil},
		{"ipt-narrow-accept", []string{"filter/INPUT"}, []string{"ip filter/INPUT"}},
		{"ipt-sport", nil, nil},
		{"ipt-raw-comment", []string{"raw/PREROUTING"}, []string{"ip raw/PREROUTING"}},
		{"nft-set-range", nil, []string{"inet t/in"}},
		{"nft-udp-reject", nil, []string{"inet t/in"}},
		{"nft-narrow-accept", nil, []string{"inet t/in"}},
		{"nft-neg", nil, nil},
		{"nft-th", nil, []string{"inet t/in"}},
		{"nft-accept-first", nil, nil},
		{"nft-named-set", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ipt := readFixture(t, filepath.Join("firewall", tt.name+".iptables-save.txt"))
			nft := readFixture(t, filepath.Join("firewall", tt.name+".nft.txt"))
			sameChains(t, "iptables-save", IptablesDrops(ipt), tt.iptables)
			sameChains(t, "nft", NftDrops(nft), tt.nft)
		})
	}
}

func sameChains(t *testing.T, tool string, got []DropRule, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: drops %+v, want chains %v", tool, got, want)
		return
	}
	for i := range got {
		if got[i].Chain != want[i] || got[i].Rule == "" {
			t.Errorf("%s: drop %d is %+v, want chain %s", tool, i, got[i], want[i])
		}
	}
}

func readFixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestAcceptCommand(t *testing.T) {
	tests := []struct{ tool, chain, want string }{
		{"iptables-save", "filter/INPUT", "iptables -I INPUT -p udp --dport 4791 -j ACCEPT"},
		{"iptables-save", "raw/PREROUTING", "iptables -t raw -I PREROUTING -p udp --dport 4791 -j ACCEPT"},
		{"nft", "inet t/in", "nft insert rule inet t in udp dport 4791 accept"},
	}
	for _, tt := range tests {
		if got := acceptCommand(tt.tool, tt.chain); got != tt.want {
			t.Errorf("acceptCommand(%s, %s) = %q, want %q", tt.tool, tt.chain, got, tt.want)
		}
	}
}

func TestSplitWordsKeepsQuotedComments(t *testing.T) {
	got := splitWords(`-A OUTPUT -m comment --comment "no roce here" -j DROP`)
	want := []string{"-A", "OUTPUT", "-m", "comment", "--comment", "no roce here", "-j", "DROP"}
	if len(got) != len(want) {
		t.Fatalf("%q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%q, want %q", got, want)
		}
	}
}

func FuzzFirewallParsers(f *testing.F) {
	f.Add("-A INPUT -p udp -m multiport --dports 4000:5000,53 -j REJECT")
	f.Add("table inet t {\n\tchain in {\n\t\tudp dport { 53, 4700-4800 } drop\n\t}\n}")
	f.Fuzz(func(t *testing.T, s string) {
		for _, r := range append(IptablesDrops(s), NftDrops(s)...) {
			if r.Rule == "" {
				t.Fatalf("drop without rule text from %q", s)
			}
		}
	})
}
