//go:build linux

package link

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// BenchmarkTimerWakeupCost is what one timer wake-up costs this machine, in CPU time taken
// from whatever else runs on that CPU: a thread spinning on CPU 0 counts its loops alone,
// then while a second thread on CPU 0 sleeps 100 µs at a time. The loops it loses, divided
// by the sleeper's wake-ups, are the cost of one timer interrupt plus the two context
// switches around the sleeper's short run. The delay line (and netem's watchdog timer, less
// the switches) pays this once per release, and every delayed query pays it again when its
// reply wakes the client. Bare metal is commonly put at 1-3 µs; a VM, whose timer
// interrupts and IPIs go through the hypervisor, can pay many times that, and then a
// delayed link costs the machine CPU per transaction that no user-space cost of the delay
// line's own accounts for.
func BenchmarkTimerWakeupCost(b *testing.B) {
	if runtime.NumCPU() < 2 {
		b.Skip("needs 2 CPUs: one to measure on, one for everything else")
	}
	const span = 2 * time.Second
	var lostNs, wakes float64
	for i := 0; i < b.N; i++ {
		alone := spinRate(b, span)
		with, w := spinRateWithSleeper(b, span)
		lostNs += (1 - with/alone) * float64(span)
		wakes += w
	}
	b.ReportMetric(lostNs/wakes/1e3, "µs/wakeup")
	b.ReportMetric(wakes/float64(b.N)/span.Seconds(), "wakeups/s")
}

// spinRateWithSleeper runs spinRate beside a sleeper on the same CPU and returns the loop
// rate and the sleeper's wake-ups.
func spinRateWithSleeper(b *testing.B, span time.Duration) (rate, wakes float64) {
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := pinCPU0(); err != nil {
			b.Error(err)
			return
		}
		// A timer slack of 1 ns makes each sleep end in its own timer interrupt.
		if err := unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0); err != nil {
			b.Errorf("prctl timerslack: %v", err)
			return
		}
		ts := unix.NsecToTimespec(int64(100 * time.Microsecond))
		for n := 0; ; n++ {
			select {
			case <-stop:
				wakes = float64(n)
				return
			default:
			}
			_ = unix.Nanosleep(&ts, nil)
		}
	}()
	rate = spinRate(b, span)
	close(stop)
	wg.Wait()
	return rate, wakes
}

// spinRate counts fixed blocks of arithmetic per second on CPU 0 for span.
func spinRate(b *testing.B, span time.Duration) float64 {
	done := make(chan float64)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := pinCPU0(); err != nil {
			b.Error(err)
			done <- 1
			return
		}
		x, n := uint64(1), 0
		start := time.Now()
		for time.Since(start) < span {
			for j := uint64(0); j < 10000; j++ {
				x += j*x + 1
			}
			n++
		}
		spinSink = x
		done <- float64(n) / time.Since(start).Seconds()
	}()
	return <-done
}

// spinSink keeps the compiler from dropping the spin loop.
var spinSink uint64

// pinCPU0 binds the calling OS thread to CPU 0.
func pinCPU0() error {
	var set unix.CPUSet
	set.Set(0)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return fmt.Errorf("pin to CPU 0: %w", err)
	}
	return nil
}
