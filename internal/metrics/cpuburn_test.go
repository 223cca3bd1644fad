package metrics

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestMain runs the package's tests, or, in the child process TestProcessCPU starts (with
// WLM_BURN_CPU set), only the CPU burn: a child is not a test, so it neither passes nor
// skips one.
func TestMain(m *testing.M) {
	if target, err := strconv.ParseFloat(os.Getenv("WLM_BURN_CPU"), 64); err == nil {
		burn(target)
	}
	os.Exit(m.Run())
}

// burn is the child process of TestProcessCPU. It burns target seconds of CPU on
// WLM_BURN_THREADS threads, says so, and then waits for stdin to close so the parent can
// read its counters while it is still alive.
func burn(target float64) {
	threads, _ := strconv.Atoi(os.Getenv("WLM_BURN_THREADS"))
	var stop atomic.Bool
	for range threads {
		go func() {
			runtime.LockOSThread()
			x := 1
			for !stop.Load() {
				for i := 0; i < 100000; i++ {
					x = x*31 + i
				}
			}
			_ = x
		}()
	}
	for cpuSelf() < target {
		time.Sleep(5 * time.Millisecond)
	}
	stop.Store(true)
	fmt.Println("burnt")
	bufio.NewReader(os.Stdin).ReadString('\n') // returns at EOF
	os.Exit(0)
}

func cpuSelf() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// TestProcessCPU burns a bounded amount of CPU in a child process and checks the sampler
// against the child's own rusage: all threads counted, ticks converted with CLK_TCK, and
// one busy thread shows as about one core.
func TestProcessCPU(t *testing.T) {
	if testing.Short() {
		t.Skip("burns CPU")
	}
	tests := []struct {
		threads int
		cpu     float64
	}{{1, 1.5}, {2, 1.0}}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("threads=%d", tc.threads), func(t *testing.T) {
			var pid atomic.Int64
			s := NewSampler(Source{ClientPIDs: func() []int {
				if p := pid.Load(); p != 0 {
					return []int{int(p)}
				}
				return nil
			}}, 250*time.Millisecond, nil)
			if err := s.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			defer s.Stop()

			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0])
			cmd.Env = append(os.Environ(), fmt.Sprintf("WLM_BURN_CPU=%g", tc.cpu),
				fmt.Sprintf("WLM_BURN_THREADS=%d", tc.threads), fmt.Sprintf("GOMAXPROCS=%d", tc.threads+1))
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			pid.Store(int64(cmd.Process.Pid)) // first seen after the baseline: counted from 0
			line, err := bufio.NewReader(stdout).ReadString('\n')
			if err != nil || line != "burnt\n" {
				stdin.Close()
				cmd.Wait()
				t.Fatalf("child said %q, %v", line, err)
			}
			samples := s.Stop()
			stdin.Close()
			if err := cmd.Wait(); err != nil {
				t.Fatal(err)
			}
			rusage := (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
			got := s.Totals().CPUClientSec
			t.Logf("sampler %.3fs, child rusage %.3fs, %d samples", got, rusage, len(samples))
			// The child exits after the last read; allow a few ticks for that.
			if got < tc.cpu-0.03 || math.Abs(got-rusage) > 0.05 {
				t.Errorf("client cpu %.3fs, child rusage %.3fs (burnt >= %.1fs)", got, rusage, tc.cpu)
			}
			var peak float64
			for _, sm := range samples {
				peak = max(peak, sm.CPUClient)
			}
			limit := float64(tc.threads) + 0.15
			if peak > limit || peak < 0.5 {
				t.Errorf("peak client cpu %.2f cores, want 0.5..%.2f for %d busy thread(s)", peak, limit, tc.threads)
			}
		})
	}
}
