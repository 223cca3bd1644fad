package link

import (
	"math"
	"os"
	"testing"
	"time"
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

func TestDue(t *testing.T) {
	t0 := time.Unix(0, 0)
	q := []Held{{1, t0}, {2, t0.Add(time.Millisecond)}, {3, t0.Add(1030 * time.Microsecond)}, {4, t0.Add(5 * time.Millisecond)}}
	for _, c := range []struct {
		now  time.Duration
		want int
	}{{-time.Millisecond, 0}, {0, 1}, {time.Millisecond, 3}, {10 * time.Millisecond, 4}} {
		if got := Due(q, t0.Add(c.now), 50*time.Microsecond); got != c.want {
			t.Errorf("Due at %v = %d, want %d", c.now, got, c.want)
		}
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

// BenchmarkSchedulerPath is the delayer's per-packet user-space work: loss decision, release
// time, hand-off through the ring, and the batch scan.
func BenchmarkSchedulerPath(b *testing.B) {
	s := NewScheduler(20*time.Millisecond, time.Millisecond, 1)
	l := NewLoss(0.1, 1)
	ring := make(chan Held, 1024)
	now := time.Now()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if l.Drop() {
			continue
		}
		ring <- Held{ID: uint32(i), Release: s.Release(now.Add(time.Duration(i) * time.Microsecond))}
		if len(ring) == cap(ring) {
			for len(ring) > 0 {
				<-ring
			}
		}
	}
}
