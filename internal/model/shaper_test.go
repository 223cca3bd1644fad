package model

import (
	"container/heap"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/link"
)

// benchProfile is the plain oltp_read_only profile of docs/bench-model.md's fit: 42.0 KB
// down and 2.2 KB up per transaction in 16 round trips, 1.1 ms of the 2 cores' CPU.
func benchProfile() *Fit {
	return &Fit{Label: "plain", WireBytesUp: 2200, WireBytesDown: 42000, RoundTrips: 16, Cores: 2,
		cpu: []cpuAt{{threads: 1, machine: 0.0011}}}
}

// At 7 Mbit the lab measured one thread at 20.9 TPS, the link 100% busy: the bucket refills
// while the thread is on the CPU and in its round trips, so those cost it nothing. A
// physical link of the same rate serialises the reply on top of them.
func TestShaperFillsSevenMbitWithOneThread(t *testing.T) {
	f := benchProfile()
	m := Machine{SharedCores: 2}
	l := Link{RateBps: 7e6, Shaped: true}
	ps, err := f.Predict(l, m, []int{1, 8, 32})
	if err != nil {
		t.Fatal(err)
	}
	full := 7e6 / 8 / f.WireBytesDown // 20.8 TPS
	for _, p := range ps {
		if math.Abs(p.TPS/full-1) > 1e-9 || p.Bottleneck != StationDownlink || math.Abs(p.Util-1) > 1e-9 {
			t.Errorf("7mbit shaped, %d threads: %.2f TPS (%s %.0f%%), want the link full: %.2f TPS", p.Threads, p.TPS, p.Bottleneck, p.Util*100, full)
		}
	}
	if measured := 20.9; math.Abs(ps[0].TPS/measured-1) > 0.01 {
		t.Errorf("1 thread: %.2f TPS, the lab measured %.1f", ps[0].TPS, measured)
	}
	phys, err := f.Predict(Link{RateBps: 7e6}, m, []int{1})
	if err != nil {
		t.Fatal(err)
	}
	if u := phys[0].Util; u > 0.95 || u < 0.85 {
		t.Errorf("7mbit physical, 1 thread: the link %.0f%% busy, want the reply serialised after the CPU (85-95%%)", u*100)
	}
}

// The same on the fit of a captured run: 20mbit and unlimited points carried to 7 Mbit.
func TestShaperFillsSevenMbitFromTheQuickRun(t *testing.T) {
	plain := quickFits(t)[0]
	ps, err := plain.Predict(Link{RateBps: 7e6, Shaped: true}, Machine{SharedCores: plain.Cores}, []int{1})
	if err != nil {
		t.Fatal(err)
	}
	if p := ps[0]; p.Util < 0.999 || p.Bottleneck != StationDownlink {
		t.Errorf("7mbit, 1 thread: %.2f TPS, downlink %.0f%% (%s); want it full", p.TPS, p.Util*100, p.Bottleneck)
	}
}

// With one thread the shaper's cycle is max(W/r, A + (W − k·b)⁺/r) (shaper.go): the credit
// covers the time away, up to a burst per message. The cases: the time away inside the
// credit (the link full), a long round trip with messages within the burst (the bytes
// free), and messages larger than the burst (each waits for its excess).
func TestShaperOneThreadCycle(t *testing.T) {
	cases := []struct {
		name              string
		rate              int64
		rtt               time.Duration
		down, roundTrips  float64
		wantLinkFull      bool
		wantExcessSeconds float64 // (W − k·b)⁺/r
	}{
		{"time away inside the credit", 7e6, 0, 42000, 16, true, 0},
		{"long round trips, small messages", 7e6, 10 * time.Millisecond, 42000, 16, false, 0},
		{"messages over the burst", 1e6, 50 * time.Millisecond, 200000, 4,
			false, (200000 - 4*float64(link.HTBBurst(1e6))) * 8 / 1e6},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := benchProfile()
			f.WireBytesDown, f.RoundTrips = c.down, c.roundTrips
			l := Link{RateBps: c.rate, RTT: c.rtt, Shaped: true}
			ps, err := f.Predict(l, Machine{SharedCores: 2}, []int{1})
			if err != nil {
				t.Fatal(err)
			}
			st := f.Stations(l, Machine{SharedCores: 2}, 1)
			away := 0.0 // everything but the downlink's own wait
			for _, s := range st {
				if s.Name != StationDownlink {
					away += s.Demand - s.Credit
				}
			}
			w := c.down * 8 / float64(c.rate)
			want := max(w, away+c.wantExcessSeconds)
			if got := ps[0].LatAvgMs / 1000; math.Abs(got/want-1) > 1e-9 {
				t.Errorf("cycle %.3f ms, want max(W/r %.3f, away %.3f + excess %.3f) = %.3f ms",
					got*1000, w*1000, away*1000, c.wantExcessSeconds*1000, want*1000)
			}
			if full := ps[0].Util > 1-1e-9; full != c.wantLinkFull {
				t.Errorf("downlink %.1f%% busy, want full %v", ps[0].Util*100, c.wantLinkFull)
			}
		})
	}
}

// A physical link is the bucket with no burst: the plain queue of demand W/r, whose
// throughput approaches the token bucket's from below as threads fill it.
func TestShaperAndPhysicalLinkMeetAtSaturation(t *testing.T) {
	f := benchProfile()
	m := Machine{SharedCores: 2}
	threads := []int{1, 2, 4, 64}
	shaped, err := f.Predict(Link{RateBps: 5e6, RTT: 2 * time.Millisecond, Shaped: true}, m, threads)
	if err != nil {
		t.Fatal(err)
	}
	phys, err := f.Predict(Link{RateBps: 5e6, RTT: 2 * time.Millisecond}, m, threads)
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range threads {
		if phys[i].TPS > shaped[i].TPS*(1+1e-12) {
			t.Errorf("%d threads: physical %.2f TPS above the shaper's %.2f", n, phys[i].TPS, shaped[i].TPS)
		}
	}
	if last := len(threads) - 1; math.Abs(phys[last].TPS/shaped[last].TPS-1) > 0.001 {
		t.Errorf("64 threads: physical %.3f TPS, shaper %.3f; both should be the link's rate / bytes", phys[last].TPS, shaped[last].TPS)
	}
}

// The model against a simulation of the bucket itself: n threads, each sending k equal
// messages through one token bucket (backlog = a rate-r queue's less b) and away for a
// fixed time between them, as the lab's round trips are.
func TestShaperAgainstSimulatedBucket(t *testing.T) {
	for _, rate := range []int64{5e6, 20e6} {
		for _, away := range []time.Duration{time.Millisecond, 20 * time.Millisecond, 160 * time.Millisecond} {
			for _, n := range []int{1, 2, 4, 8, 32} {
				t.Run(fmt.Sprintf("%s/%s/%d", link.FormatRate(rate), away, n), func(t *testing.T) {
					const bytes, msgs = 42000.0, 16
					b := float64(link.HTBBurst(rate))
					st := []Station{{"away", away.Seconds(), 0, 0},
						{StationDownlink, bytes * 8 / float64(rate), 1, shaperCredit(bytes, msgs, b, rate)}}
					res, err := Solve(st, []int{n})
					if err != nil {
						t.Fatal(err)
					}
					sim := simulateBucket(n, msgs, bytes/msgs, away.Seconds()/msgs, float64(rate)/8, b)
					if e := res[0].Throughput/sim - 1; math.Abs(e) > 0.02 {
						t.Errorf("model %.2f TPS, simulated bucket %.2f (%+.1f%%)", res[0].Throughput, sim, e*100)
					}
				})
			}
		}
	}
}

// simulateBucket returns the transactions per second of n threads that each send msgs
// messages of w bytes through a token bucket of rate r bytes/s and depth b bytes, and are
// away for g seconds after each: a fluid bucket, whose last byte of a message leaves
// (V − b)⁺/r after it arrives, V the rate-r queue's work then, the message included.
func simulateBucket(n, msgs int, w, g, r, b float64) float64 {
	const horizon = 60.0
	q := &readyQueue{}
	for i := range n {
		heap.Push(q, thread{at: float64(i) * g / float64(n)})
	}
	v, last, done, warm := 0.0, 0.0, 0, horizon/5
	for {
		th := heap.Pop(q).(thread)
		if th.at > horizon {
			break
		}
		v = max(0, v-r*(th.at-last)) + w
		last = th.at
		leave := th.at + max(0, v-b)/r
		if th.sent++; th.sent%msgs == 0 && leave > warm {
			done++
		}
		th.at = leave + g
		heap.Push(q, th)
	}
	return float64(done) / (horizon - warm)
}

type thread struct {
	at   float64 // when its next message reaches the bucket
	sent int
}

type readyQueue []thread

func (q readyQueue) Len() int           { return len(q) }
func (q readyQueue) Less(i, j int) bool { return q[i].at < q[j].at }
func (q readyQueue) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *readyQueue) Push(x any)        { *q = append(*q, x.(thread)) }
func (q *readyQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}
