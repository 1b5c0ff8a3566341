package pollwait

import (
	"errors"
	"testing"
	"time"
)

func TestPollUntilReturnsTheFirstCompletions(t *testing.T) {
	calls := 0
	n, expired, err := PollUntil(time.Second, func() (int, error) {
		if calls++; calls == 10000 {
			return 3, nil
		}
		return 0, nil
	})
	if n != 3 || expired || err != nil || calls != 10000 {
		t.Errorf("n %d expired %v err %v after %d polls", n, expired, err, calls)
	}
	boom := errors.New("poll failed")
	if _, _, err := PollUntil(time.Second, func() (int, error) { return 0, boom }); err != boom {
		t.Errorf("err %v, want the poll's", err)
	}
}

func TestPollUntilEndsAfterItsBudget(t *testing.T) {
	start := time.Now()
	n, expired, err := PollUntil(20*time.Millisecond, func() (int, error) { return 0, nil })
	if n != 0 || !expired || err != nil {
		t.Fatalf("n %d expired %v err %v", n, expired, err)
	}
	if took := time.Since(start); took < 20*time.Millisecond || took > 2*time.Second {
		t.Errorf("took %v for a 20ms budget", took)
	}
}
