package querylog

import (
	"errors"
	"io"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// TestStreamsInBoundedMemory reads a long generated log of each format and samples the
// heap as it goes: it stays far below the log's size, so nothing grows with the log. The
// full run reads 5 million lines a format; -short reads half a million.
func TestStreamsInBoundedMemory(t *testing.T) {
	lines := int64(5_000_000)
	if testing.Short() {
		lines = 500_000
	}
	const limit = 16 << 20
	for _, f := range Formats {
		t.Run(string(f), func(t *testing.T) {
			gen := newGenLog(f, lines)
			l, err := Open(gen, Options{Format: f})
			if err != nil {
				t.Fatal(err)
			}
			runtime.GC()
			var ms runtime.MemStats
			var peak uint64
			var queries, sessions int64
			for n := 0; ; n++ {
				ev, err := l.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				queries += b2i64(ev.Kind == Query)
				sessions += b2i64(ev.Kind == Connect)
				if n%200_000 == 0 {
					runtime.ReadMemStats(&ms)
					peak = max(peak, ms.HeapAlloc)
				}
			}
			if gen.n < lines || queries != gen.entry || sessions != 8*((gen.entry+genRun-1)/genRun) {
				t.Errorf("%d lines, %d entries made; %d queries, %d sessions read", gen.n, gen.entry, queries, sessions)
			}
			t.Logf("%d lines (%d MiB) read with the heap at %d MiB at most", gen.n, gen.bytes>>20, peak>>20)
			if peak > limit {
				t.Errorf("heap peaked at %d MiB reading %d MiB", peak>>20, gen.bytes>>20)
			}
			if !testing.Short() && gen.bytes < 4*limit {
				t.Errorf("the log is %d MiB: too short to show the heap does not follow it", gen.bytes>>20)
			}
		})
	}
}

// cpuTime is the CPU time the process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func b2i64(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// benchLines is the length of the log BenchmarkRead reads in one op.
const benchLines = 2_000_000

// BenchmarkRead reads a generated log of two million lines per op and reports lines
// per second of wall time and of the process's CPU time (user and system, garbage
// collection and the generator included: on a shared machine the second is the figure
// that holds), and the bytes and allocations a line costs.
func BenchmarkRead(b *testing.B) {
	for _, f := range Formats {
		b.Run(string(f), func(b *testing.B) {
			b.ReportAllocs()
			var lines int64
			var cpu time.Duration
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			for b.Loop() {
				gen := newGenLog(f, benchLines)
				cpu0 := cpuTime(b)
				l, err := Open(gen, Options{Format: f})
				if err != nil {
					b.Fatal(err)
				}
				for {
					if _, err := l.Next(); err != nil {
						if !errors.Is(err, io.EOF) {
							b.Fatal(err)
						}
						break
					}
				}
				cpu += cpuTime(b) - cpu0
				lines += gen.n
			}
			runtime.ReadMemStats(&m1)
			b.ReportMetric(float64(lines)/b.Elapsed().Seconds(), "lines/s")
			b.ReportMetric(float64(lines)/cpu.Seconds(), "lines/cpu-s")
			b.ReportMetric(float64(m1.TotalAlloc-m0.TotalAlloc)/float64(lines), "B/line")
			b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/float64(lines), "allocs/line")
		})
	}
}
