package rdma

import "testing"

func TestCString(t *testing.T) {
	if got := string(CString([]byte("ab\x00cd"))); got != "ab" {
		t.Errorf("got %q", got)
	}
	if got := string(CString([]byte("abc"))); got != "abc" {
		t.Errorf("no NUL: got %q", got)
	}
}
