package demo

import "testing"

func TestGIDIPv4AndColons(t *testing.T) {
	// GIDs and the lines the original printed for them in the lab VM
	// (testdata/original-*.stdout) and in the seed transcript.
	for _, c := range []struct{ gid, ip, colons string }{
		{"0000:0000:0000:0000:0000:ffff:0a09:0001", "10.9.0.1", "00:00:00:00:00:00:00:00:00:00:ff:ff:0a:09:00:01"},
		{"0000:0000:0000:0000:0000:ffff:0a0b:0bfb", "10.11.11.251", "00:00:00:00:00:00:00:00:00:00:ff:ff:0a:0b:0b:fb"},
		// The link-local entry: the original prints its last four bytes
		// as an address all the same.
		{"fe80:0000:0000:0000:b208:75ff:fe5f:b85e", "254.95.184.94", "fe:80:00:00:00:00:00:00:b2:08:75:ff:fe:5f:b8:5e"},
	} {
		g, err := ParseGID(c.gid)
		if err != nil {
			t.Fatal(err)
		}
		if got := g.IPv4().String(); got != c.ip {
			t.Errorf("%s: IPv4 %s, want %s", c.gid, got, c.ip)
		}
		if got := g.Colons(); got != c.colons {
			t.Errorf("%s: Colons %s, want %s", c.gid, got, c.colons)
		}
	}
}

func TestGIDKinds(t *testing.T) {
	ll, _ := ParseGID("fe80::f05c:9fff:fe42:2fca")
	v4, _ := ParseGID("::ffff:10.9.0.1")
	v6, _ := ParseGID("fd09::1")
	if !ll.IsLinkLocal() || v4.IsLinkLocal() || v6.IsLinkLocal() {
		t.Error("IsLinkLocal wrong")
	}
	if !v4.IsIPv4() || ll.IsIPv4() || v6.IsIPv4() {
		t.Error("IsIPv4 wrong")
	}
	if !(GID{}).IsZero() || v4.IsZero() {
		t.Error("IsZero wrong")
	}
	if _, err := ParseGID("10.9.0.1"); err == nil {
		t.Error("ParseGID accepted a bare IPv4 address")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func gid(t *testing.T, s string) GID {
	t.Helper()
	g, err := ParseGID(s)
	must(t, err)
	return g
}
