package ping

import "testing"

func TestAtoiMatchesGlibc(t *testing.T) {
	// Expected values printed by glibc's atoi on the build host.
	cases := map[string]int{
		"12abc": 12, "abc": 0, " -5": -5, "+7": 7, "": 0, "-": 0,
		"4294967297": 1, "99999999999999999999": -1, "-99999999999999999999": 0,
		"2147483648": -2147483648, "\t 42": 42, "0x10": 0, "1e3": 1,
	}
	for in, want := range cases {
		if got := Atoi(in); got != want {
			t.Errorf("Atoi(%q) = %d, want %d", in, got, want)
		}
	}
}
