package cm

import "testing"

func TestStrtolReadsAsCDoes(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
	}{
		{"0x111", 0x111}, {"0X2", 2}, {"273", 273}, {"010", 8}, {"0", 0}, {"", 0}, {"abc", 0},
		{"  -5", -5}, {"+7", 7}, {"12abc", 12}, {"0x", 0}, {"0xg", 0}, {"09", 0}, {"0x1F", 31},
		{"99999999999999999999", 1<<63 - 1},
	} {
		if got := Strtol(c.in); got != c.want {
			t.Errorf("Strtol(%q) = %d, want %d", c.in, got, c.want)
		}
	}
}

func TestUsageIsTheCToolsText(t *testing.T) {
	want := "usage: rdma_client\n\t[-s server_address]\n\t[-p port_number]\n"
	if got := Usage("rdma_client"); got != want {
		t.Errorf("Usage(rdma_client) = %q, want %q", got, want)
	}
	for _, tool := range Tools {
		if len(usages[tool]) == 0 {
			t.Errorf("no usage text for %s", tool)
		}
	}
}
