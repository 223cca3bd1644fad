package tunnel

import (
	"runtime"
	"time"
)

// settledGoroutines waits (up to 5s) until the goroutine count is at most target, or stops
// changing when target is 0, and returns it.
func settledGoroutines(target int) int {
	n := runtime.NumGoroutine()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		m := runtime.NumGoroutine()
		if (target > 0 && m <= target) || (target == 0 && m == n) {
			return m
		}
		n = m
	}
	return n
}
