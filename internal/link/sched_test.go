package link

import (
	"encoding/json"
	"math"
	"os"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/procfs"
	"github.com/wirelab/wirelab/internal/result"
)

func TestSchedulerNeverReordersUnderJitter(t *testing.T) {
	s := NewScheduler(20*time.Millisecond, 15*time.Millisecond, 42)
	t0 := time.Unix(1000, 0)
	var last time.Time
	var sum time.Duration
	const n = 20000
	for i := range n {
		arr := t0.Add(time.Duration(i) * 100 * time.Microsecond) // 10 kpps, spacing << jitter
		rel := s.Release(arr)
		if rel.Before(last) {
			t.Fatalf("packet %d released at %v, before the previous packet (%v)", i, rel, last)
		}
		if d := rel.Sub(arr); d < 5*time.Millisecond || d > 35*time.Millisecond {
			t.Fatalf("packet %d delayed %v, outside 20ms±15ms", i, d)
		}
		last = rel
		sum += rel.Sub(arr)
	}
	// The floor skews the delay upward, but it stays within the jitter band.
	if mean := sum / n; mean < 20*time.Millisecond || mean > 35*time.Millisecond {
		t.Errorf("mean delay %v, want within [20ms, 35ms]", mean)
	}
}

func TestSchedulerJitterSpreadsWhenSparse(t *testing.T) {
	s := NewScheduler(10*time.Millisecond, 2*time.Millisecond, 7)
	t0 := time.Unix(0, 0)
	lo, hi := time.Hour, time.Duration(0)
	for i := range 2000 {
		arr := t0.Add(time.Duration(i) * 50 * time.Millisecond) // sparse: the floor never binds
		d := s.Release(arr).Sub(arr)
		lo, hi = min(lo, d), max(hi, d)
	}
	if lo < 8*time.Millisecond || hi > 12*time.Millisecond || hi-lo < 3*time.Millisecond {
		t.Errorf("delays span [%v, %v], want most of [8ms, 12ms]", lo, hi)
	}
}

func TestSchedulerNoJitterIsExact(t *testing.T) {
	s := NewScheduler(20*time.Millisecond, 0, 1)
	arr := time.Unix(5, 0)
	if got := s.Release(arr).Sub(arr); got != 20*time.Millisecond {
		t.Fatalf("delay %v, want exactly 20ms", got)
	}
}

func TestLossRateWithFixedSeed(t *testing.T) {
	for _, pct := range []float64{0, 0.1, 1, 10, 50, 100} {
		l := NewLoss(pct, 99)
		const n = 200_000
		drops := 0
		for range n {
			if l.Drop() {
				drops++
			}
		}
		got := 100 * float64(drops) / n
		p := pct / 100
		tol := 100*4*math.Sqrt(p*(1-p)/n) + 1e-9
		if math.Abs(got-pct) > tol {
			t.Errorf("loss %g%%: dropped %.4f%%, want within ±%.4f", pct, got, tol)
		}
	}
	a, b := NewLoss(5, 3), NewLoss(5, 3)
	for i := range 1000 {
		if a.Drop() != b.Drop() {
			t.Fatalf("same seed, different decision at packet %d", i)
		}
	}
}

func TestQueueLen(t *testing.T) {
	cases := []struct {
		rate     int64
		hold     time.Duration
		min, max int
	}{
		{0, 0, minQueueLen, minQueueLen},
		{1_000_000, 10 * time.Millisecond, minQueueLen, minQueueLen},
		// 1 Gbit/s of 512-byte packets for 125 ms: 30518 packets, +25%, +128.
		{1_000_000_000, 125 * time.Millisecond, 38_200, 38_300},
		// unlimited: 500 kpps for 250 ms.
		{0, 250 * time.Millisecond, 156_250, 156_500},
		{0, time.Hour, maxQueueLen, maxQueueLen},
	}
	for _, c := range cases {
		if got := QueueLen(c.rate, c.hold); got < c.min || got > c.max {
			t.Errorf("QueueLen(%d, %v) = %d, want [%d, %d]", c.rate, c.hold, got, c.min, c.max)
		}
	}
}

func TestDelayRingReleasesTheDuePrefix(t *testing.T) {
	r := newDelayRing(4)
	for _, h := range []held{{1, 0}, {2, 1_000_000}, {3, 1_030_000}, {4, 5_000_000}} {
		if r.full() {
			t.Fatal("ring full before its capacity")
		}
		r.push(h)
	}
	if !r.full() {
		t.Fatal("ring of 4 not full after 4 pushes")
	}
	for _, c := range []struct {
		now      int64
		wantLast uint32
		wantN    int
	}{{-1_000_000, 0, 0}, {0, 1, 1}, {1_000_000, 3, 2}, {10_000_000, 4, 1}} {
		last, n := r.popDue(c.now, 50_000)
		if n != c.wantN || (n > 0 && last != c.wantLast) {
			t.Errorf("popDue at %d = (%d, %d), want (%d, %d)", c.now, last, n, c.wantLast, c.wantN)
		}
	}
	if _, ok := r.next(); ok || r.len() != 0 {
		t.Fatalf("ring not empty after every packet was due")
	}
	// Wrap around the end of the buffer.
	for i := range 3 {
		r.push(held{uint32(10 + i), int64(i)})
	}
	r.popDue(0, 0)
	for i := range 2 {
		r.push(held{uint32(20 + i), int64(10 + i)})
	}
	if rel, _ := r.next(); rel != 1 || r.len() != 4 {
		t.Fatalf("after wrap: head release %d, len %d; want 1, 4", rel, r.len())
	}
	if last, n := r.popAll(); last != 21 || n != 4 {
		t.Fatalf("popAll = (%d, %d), want (21, 4)", last, n)
	}
}

func TestParseNfnetlinkQueue(t *testing.T) {
	b, err := os.ReadFile("testdata/nfnetlink_queue")
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseNfnetlinkQueue(b)
	if err != nil {
		t.Fatal(err)
	}
	if q := got[101]; q.Total != 5 || q.QueueDropped != 7 || q.UserDropped != 3 {
		t.Errorf("queue 101 = %+v, want total 5, queue_dropped 7, user_dropped 3", q)
	}
	if _, err := ParseNfnetlinkQueue([]byte("100 1 2\n")); err == nil {
		t.Error("short line parsed without error")
	}
}

// BenchmarkSchedulerPath is the delay loop's per-packet user-space work: loss decision,
// release time, the ring, and the release scan.
func BenchmarkSchedulerPath(b *testing.B) {
	s := NewScheduler(20*time.Millisecond, time.Millisecond, 1)
	l := NewLoss(0.1, 1)
	r := newDelayRing(1024)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if l.Drop() {
			continue
		}
		now := int64(i) * 1000
		r.push(held{uint32(i), s.ReleaseNs(now)})
		r.popDue(now, int64(maxSlack))
	}
}

// The delay line's cost is all of its CPU; the verdict writes' sample is scaled by the
// packets its verdicts accepted, not by those it received and dropped.
func TestCostBetween(t *testing.T) {
	t0 := time.Unix(100, 0)
	before := DelayerStats{Pid: 7, Updated: t0, CPUNs: 1e9, VerdictSampledNs: 1e6, VerdictSampledPackets: 100,
		Queues: []QueueStats{{Received: 1000, Delayed: 990}, {Received: 500, Delayed: 500}}}
	// 40,000 packets received, 4,000 of them lost on purpose or to a full delay line: 36,000
	// accepted, 10,000 of them in sampled verdicts that took 20 ms.
	after := DelayerStats{Pid: 7, Updated: t0.Add(10 * time.Second), CPUNs: 1e9 + 200e6,
		VerdictSampledNs: 1e6 + 20e6, VerdictSampledPackets: 100 + 10_000,
		Queues: []QueueStats{{Received: 1000 + 30_000, Delayed: 990 + 26_000, LossDropped: 3000, OverflowDropped: 1000},
			{Received: 500 + 10_000, Delayed: 500 + 9_990, FlushedAtExit: 10}}}
	c, ok := CostBetween(before, after)
	if !ok {
		t.Fatal("CostBetween refused two snapshots of one delayer")
	}
	if c.Packets != 40_000 || c.Accepted != 36_000 || c.CPU != 200*time.Millisecond {
		t.Fatalf("cost %+v: want 40000 packets, 36000 accepted, 200ms CPU", c)
	}
	// 2 µs a packet accepted: 72 ms in verdict writes (80 ms, were the 4,000 dropped scaled
	// as delivered).
	if c.Verdicts != 72*time.Millisecond || c.VerdictsPerPacket() != 2*time.Microsecond {
		t.Errorf("verdicts %v (%v a packet), want 72ms (2µs)", c.Verdicts, c.VerdictsPerPacket())
	}
	if c.PerPacket() != 5*time.Microsecond {
		t.Errorf("%v a packet, want 5µs: all of the CPU over every packet received", c.PerPacket())
	}
	if got := c.MachineShare(2); got < 0.0099 || got > 0.0101 {
		t.Errorf("machine share %.4f, want 0.01 (all of 200 ms of 2 cores × 10 s)", got)
	}
	after.VerdictSampledNs = 1e6 + 60e6 // 6 µs a packet, 216 ms: more than the CPU, capped at it
	if c, _ = CostBetween(before, after); c.Verdicts != c.CPU {
		t.Errorf("verdicts %v beyond the CPU %v", c.Verdicts, c.CPU)
	}
	after.Pid = 8
	if _, ok := CostBetween(before, after); ok {
		t.Error("snapshots of two delayer processes gave a cost")
	}
}

// The loop's lateness histogram, read through two stats snapshots, gives the interval's
// releases, their mean lateness and a p99 bound.
func TestReleaseLateness(t *testing.T) {
	var st loopStats
	snap := func() DelayerStats {
		s := DelayerStats{Pid: 1, Updated: time.Now(), HeadLateSumNs: st.lateSumNs.Load(), HeadLate: make([]int64, len(st.late))}
		for i := range st.late {
			s.HeadLate[i] = st.late[i].Load()
		}
		return s
	}
	st.recordLate(7000) // before the interval: 7 µs
	before := snap()
	for i := 0; i < 98; i++ {
		st.recordLate(3000) // 3 µs: the 5 µs bucket
	}
	st.recordLate(150_000)   // 150 µs: the 200 µs bucket
	st.recordLate(9_000_000) // 9 ms: above every bound
	time.Sleep(time.Millisecond)
	c, ok := CostBetween(before, snap())
	if !ok || c.Releases != 100 {
		t.Fatalf("releases %d (ok %v), want 100", c.Releases, ok)
	}
	if want := time.Duration(98*3000+150_000+9_000_000) / 100; c.LateMean() != want {
		t.Errorf("mean lateness %v, want %v", c.LateMean(), want)
	}
	if got := c.LateQuantile(0.98); got != 5*time.Microsecond {
		t.Errorf("p98 bound %v, want 5µs", got)
	}
	if got := c.LateQuantile(0.99); got != 200*time.Microsecond {
		t.Errorf("p99 bound %v, want 200µs", got)
	}
	if got := c.LateQuantile(1); got != -1 {
		t.Errorf("max bound %v, want -1 (above every bucket)", got)
	}
	if (DelayerCost{}).LateQuantile(0.99) != 0 || (DelayerCost{}).LateMean() != 0 {
		t.Error("no releases gave a lateness")
	}
}

// The stats say how the delayer's own CPU hold went: held, failed with its error, or
// (not asked) nothing.
func TestSnapshotRecordsTheCPUHold(t *testing.T) {
	for _, held := range []*result.CPUHold{nil, {Held: true}, {Error: "keep CPUs awake: open /dev/cpu_dma_latency: permission denied"}} {
		lp := &loop{cfg: &DelayerConfig{Proc: procfs.At(t.TempDir())}, held: held}
		b, err := json.Marshal(lp.snapshot(time.Now()))
		if err != nil {
			t.Fatal(err)
		}
		st, err := ParseDelayerStats("stats", b)
		if err != nil {
			t.Fatal(err)
		}
		if (st.CPUHold == nil) != (held == nil) || held != nil && *st.CPUHold != *held {
			t.Errorf("stats carry CPU hold %+v, want %+v", st.CPUHold, held)
		}
	}
}
