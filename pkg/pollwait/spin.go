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
