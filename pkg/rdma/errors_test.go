package rdma

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"
)

func TestPerror(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{Errorf("ibv_open_device", syscall.ENODEV), "No such device"},
		{fmt.Errorf("accept: %w", syscall.ECONNREFUSED), "Connection refused"},
		{fmt.Errorf("read: %w", os.ErrDeadlineExceeded), "Connection timed out"},
		{errors.New("plain"), "plain"},
	}
	for _, tt := range tests {
		if got := Perror(tt.err); got != tt.want {
			t.Errorf("Perror(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}
