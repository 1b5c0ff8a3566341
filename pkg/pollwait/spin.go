package pollwait

import "time"

// SpinPoll calls poll until it reports completions or fails, or until
// budget has passed. It returns poll's last result and the time spent.
func SpinPoll(budget time.Duration, poll func() (int, error)) (n int, spent time.Duration, err error) {
	start := time.Now()
	for {
		if n, err = poll(); n != 0 || err != nil {
			return n, time.Since(start), err
		}
		if spent = time.Since(start); spent >= budget {
			return 0, spent, nil
		}
	}
}

// pollUntilClockEvery is how many empty polls PollUntil makes between two reads
// of the clock.
const pollUntilClockEvery = 4096

// PollUntil calls poll until it reports completions or fails, or until
// budget (negative: no bound) has passed, when it returns 0 and expired.
// Unlike SpinPoll it reads the clock once every few thousand empty polls,
// not after each: where the clock has no vDSO path (some virtual
// machines) a read is a system call, dearer than the poll itself.
func PollUntil(budget time.Duration, poll func() (int, error)) (n int, expired bool, err error) {
	var deadline time.Time
	for spins := 1; ; spins++ {
		if n, err = poll(); n != 0 || err != nil {
			return n, false, err
		}
		if budget < 0 || spins%pollUntilClockEvery != 0 {
			continue
		}
		switch now := time.Now(); {
		case deadline.IsZero():
			deadline = now.Add(budget)
		case !now.Before(deadline):
			return 0, true, nil
		}
	}
}
