package tunnel

import (
	"bytes"
	"fmt"
	"math"
	"testing"
	"time"
)

// testCal is a calibration shaped like klauspost's levels on database replies: each
// stronger level several times slower for a better ratio (speeds in raw bytes per CPU second).
var testCal = []levelCal{{400e6, 3}, {200e6, 3.3}, {80e6, 4.5}, {20e6, 5}}

const (
	mbit     = 1e6 / 8 // bytes/s of one Mbit/s
	idxOf1   = 0
	idxOf3   = 1
	idxOf7   = 2
	idxOf11  = 3
	noCeil   = 4
	halfACPU = 0.5
)

// TestPickLevel: the strongest level whose speed (calibrated × avail) is at least levelKeep ×
// the raw rate the link drains at it; the current level is kept down to levelHoldK ×.
func TestPickLevel(t *testing.T) {
	if len(adaptLevels) != len(testCal) {
		t.Fatalf("adaptLevels %v: the test calibration has %d levels", adaptLevels, len(testCal))
	}
	for _, tc := range []struct {
		name string
		in   levelInputs
		want int
	}{
		// 2.5 MB/s × 4.5 × 2 = 22.5 MB/s ≤ 80 × 0.5; level 11: 25 MB/s > 20 × 0.5.
		{"20mbit from level 1", levelInputs{cur: idxOf1, avail: halfACPU, linkRate: 20 * mbit}, idxOf7},
		{"2mbit: the best level", levelInputs{cur: idxOf1, avail: halfACPU, linkRate: 2 * mbit}, idxOf11},
		{"100mbit: level 3", levelInputs{cur: idxOf1, avail: halfACPU, linkRate: 100 * mbit}, idxOf3},
		{"unshaped: level 1", levelInputs{cur: idxOf7, avail: halfACPU, linkRate: 8000 * mbit}, idxOf1},
		{"2mbit under a ceiling", levelInputs{cur: idxOf1, ceiling: idxOf11, avail: halfACPU, linkRate: 2 * mbit}, idxOf7},
		// level 7 at avail 0.2 makes 16 MB/s: under 2 × 11.25, over 1.25 × 11.25: kept.
		{"20mbit, busy CPU: level 7 held", levelInputs{cur: idxOf7, avail: 0.2, linkRate: 20 * mbit}, idxOf7},
		// at avail 0.1 level 7 makes 8 MB/s, under 1.25 × 11.25: the strongest that fits, 3.
		{"20mbit, starved CPU: down to 3", levelInputs{cur: idxOf7, avail: 0.1, linkRate: 20 * mbit}, idxOf3},
		{"starved everywhere: level 1", levelInputs{cur: idxOf7, avail: 0.01, linkRate: 20 * mbit}, idxOf1},
		// the live ratio is twice the calibration's: level 7 drains 9×, 45 MB/s > 40.
		{"live ratio scales the need", levelInputs{cur: idxOf1, avail: halfACPU, liveRatio: 6, linkRate: 20 * mbit}, idxOf3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in
			in.cal = testCal
			if in.ceiling == 0 {
				in.ceiling = noCeil
			}
			if got := pickLevel(in); got != tc.want {
				t.Fatalf("pickLevel = level %d, want %d", adaptLevels[got], adaptLevels[tc.want])
			}
		})
	}
}

// levelClock drives a levelPolicy on a synthetic clock: a link that delivers rate bytes/s
// and an encoder busy the given share of each second.
type levelClock struct {
	t     *testing.T
	l     *levelPolicy
	at    time.Time
	acked uint64
}

func newLevelClock(t *testing.T) *levelClock {
	c := &levelClock{t: t, l: newLevelPolicy(), at: time.Unix(1000, 0)}
	c.l.linkSpan = time.Second // a drain-rate sample each synthetic second (TestLevelLinkRate covers linkEvery)
	c.l.observeLink(0, c.at)
	c.l.decide(c.at)
	return c
}

// second passes one second: the link delivers rate bytes, the encoder encodes a small
// frame and then 3 MiB at ratio 3 (the calibration's level-1 ratio) in busy seconds; it
// returns the decision at its end.
func (c *levelClock) second(rate float64, busy float64) (int, bool) {
	c.t.Helper()
	return c.secondQueued(rate, busy, false)
}

// secondQueued is second with every TCP_INFO sample showing a queue, or none.
func (c *levelClock) secondQueued(rate float64, busy float64, queued bool) (int, bool) {
	c.t.Helper()
	c.at = c.at.Add(time.Second)
	c.acked += uint64(rate)
	c.l.observeLink(c.acked, c.at)
	for range 10 {
		c.l.observeQueue(queued)
	}
	c.l.observe(4<<10, 2<<10, time.Microsecond)
	c.l.observe(3<<20, 1<<20, time.Duration(busy*float64(time.Second)))
	lvl, changed, why := c.l.decide(c.at)
	if changed == (why == "") {
		c.t.Fatalf("changed %v with reason %q", changed, why)
	}
	return lvl, changed
}

// TestLevelPolicy: the level waits for a calibration and a drain rate, then moves straight
// to the level pickLevel names, holds it levelHold, steps down when the encoder is busy
// over levelDown and does not retry that level for levelRetry.
func TestLevelPolicy(t *testing.T) {
	expect := func(step string, lvl int, changed bool, want int, wantChanged bool) {
		t.Helper()
		if lvl != want || changed != wantChanged {
			t.Fatalf("%s: level %d changed %v, want %d changed %v", step, lvl, changed, want, wantChanged)
		}
	}
	c := newLevelClock(t)
	lvl, changed := c.second(20*mbit, 0.001)
	expect("no calibration yet", lvl, changed, 1, false)
	c.l.calibrated(testCal)
	if lvl, _, _ := c.l.decide(c.at.Add(time.Millisecond)); lvl != 1 {
		t.Fatalf("decided within levelEvery: level %d", lvl)
	}
	// An idle encoder (3 MiB in 1 ms: avail 1) on 20 mbit: level 7 (11 needs 25 MB/s of 20).
	lvl, changed = c.second(20*mbit, 0.001)
	expect("calibrated, 20mbit", lvl, changed, 7, true)
	lvl, changed = c.second(20*mbit, 0.9)
	expect("encoder busy 90%", lvl, changed, 3, true)
	for i := range 5 {
		lvl, changed = c.second(20*mbit, 0.001)
		expect(fmt.Sprintf("after leaving 7, second %d", i), lvl, changed, 3, false)
	}
	c.at = c.at.Add(levelRetry)
	c.acked += uint64(20 * mbit * levelRetry.Seconds())
	lvl, changed = c.second(20*mbit, 0.001)
	expect("after levelRetry", lvl, changed, 7, true)
	// A link that becomes fast (unshaped): the drain rate's maximum rises at once, the
	// level follows once levelHold has passed.
	for i := range 2 {
		lvl, changed = c.second(8000*mbit, 0.001)
		expect(fmt.Sprintf("fast link within levelHold, second %d", i), lvl, changed, 7, false)
	}
	lvl, changed = c.second(8000*mbit, 0.001)
	expect("fast link after levelHold", lvl, changed, 1, true)

	// On a backlogged link the encoder keeps up: a busy share over levelDown or a CPU
	// estimate that would pick a weaker level does not step down; a stronger one is taken.
	c = newLevelClock(t)
	c.l.calibrated(testCal)
	lvl, changed = c.secondQueued(20*mbit, 0.001, true)
	expect("backlogged 20mbit", lvl, changed, 7, true)
	for i := range 5 {
		lvl, changed = c.secondQueued(20*mbit, 0.9, true)
		expect(fmt.Sprintf("backlogged, encoder busy 90%%, second %d", i), lvl, changed, 7, false)
	}
	// Busy above levelProbe, so the estimates alone take the stronger level.
	for range 3 {
		c.secondQueued(2*mbit, 0.26, true)
	}
	c.at = c.at.Add(4 * linkHalfLife)
	lvl, changed = c.secondQueued(2*mbit, 0.26, true)
	expect("backlogged and slower", lvl, changed, 11, true)

	// The first frame at a new level pays the encoder's allocations: however long it took,
	// it does not count as the level's cost.
	c = newLevelClock(t)
	c.l.calibrated(testCal)
	lvl, changed = c.second(20*mbit, 0.001)
	expect("calibrated again, 20mbit", lvl, changed, 7, true)
	c.at = c.at.Add(time.Second)
	c.l.observe(4<<10, 2<<10, 900*time.Millisecond)
	if lvl, changed, why := c.l.decide(c.at); lvl != 7 || changed {
		t.Fatalf("after a first frame of 900 ms at the new level: level %d changed %v (%s), want 7 kept", lvl, changed, why)
	}
	c.at = c.at.Add(time.Second)
	c.l.observe(4<<10, 2<<10, 900*time.Millisecond)
	if lvl, changed, _ := c.l.decide(c.at); lvl != 3 || !changed {
		t.Fatalf("a second frame of 900 ms: level %d changed %v, want a step down to 3", lvl, changed)
	}

	// Backlogged, the estimates keep level 1 (a calibration that reads level 3 seven times
	// slower) while the encoder is mostly idle: it tries 3, keeps it while the link stays
	// backlogged, and comes back from a level too slow for the link (no longer backlogged,
	// busy) without retrying it for levelRetry.
	c = newLevelClock(t)
	c.l.calibrated([]levelCal{{400e6, 3}, {57e6, 3.1}, {40e6, 3.2}, {10e6, 3.3}})
	lvl, changed = c.secondQueued(200*mbit, 0.30, true)
	expect("backlogged, level 1 fits alone, encoder busy 30%", lvl, changed, 1, false)
	for i := range 3 {
		lvl, changed = c.secondQueued(200*mbit, 0.14, true)
		if changed {
			expect(fmt.Sprintf("backlogged, encoder busy 14%%, second %d", i), lvl, changed, 3, true)
			break
		}
	}
	if lvl != 3 {
		t.Fatalf("backlogged with the encoder busy 14%%: still level %d, want a try of 3", lvl)
	}
	for i := range 3 {
		lvl, changed = c.secondQueued(200*mbit, 0.40, true)
		expect(fmt.Sprintf("at 3, backlogged, busy 40%%, second %d", i), lvl, changed, 3, false)
	}
	lvl, changed = c.secondQueued(150*mbit, 0.95, false)
	expect("at 3, the encoder the bottleneck", lvl, changed, 1, true)
	for i := range 5 {
		lvl, changed = c.secondQueued(200*mbit, 0.14, true)
		expect(fmt.Sprintf("back at 1, within levelRetry, second %d", i), lvl, changed, 1, false)
	}

	// A slow link ends at the best level, loaded or not.
	c = newLevelClock(t)
	c.l.calibrated(testCal)
	lvl, changed = c.second(2*mbit/3, 0.001)
	expect("2mbit a third used", lvl, changed, 11, true)
}

// TestLevelTriedNotRetried: a level the encoder tried on a backlogged link and the policy
// then leaves because the estimates no longer take it (the link stopped queueing, the
// encoder not busy enough to step down for that) is not tried again for levelRetry, so
// the level does not alternate between two and lose its history at every change.
func TestLevelTriedNotRetried(t *testing.T) {
	c := newLevelClock(t)
	// Level 3 reads seven times slower than 1: the estimates keep 1 on 200 mbit.
	c.l.calibrated([]levelCal{{400e6, 3}, {57e6, 3.1}, {40e6, 3.2}, {10e6, 3.3}})
	tryThree := func(step string) {
		t.Helper()
		for range 3 {
			if lvl, changed := c.secondQueued(200*mbit, 0.14, true); changed {
				if lvl != 3 {
					t.Fatalf("%s: moved to level %d, want a try of 3", step, lvl)
				}
				return
			}
		}
		t.Fatalf("%s: no try of level 3 while backlogged with the encoder busy 14%%", step)
	}
	tryThree("first try")
	var lvl int
	var changed bool
	for i := range 4 {
		// not backlogged, busy 40% (under levelDown): the estimates decide, once levelHold passed
		if lvl, changed = c.secondQueued(200*mbit, 0.40, false); changed {
			break
		}
		if i == 3 {
			t.Fatalf("at the tried level 3 off a queue: still %d after 4 s, want the estimates' 1", lvl)
		}
	}
	if lvl != 1 {
		t.Fatalf("left the tried level for %d, want 1", lvl)
	}
	for i := range 10 {
		if lvl, changed = c.secondQueued(200*mbit, 0.14, true); changed {
			t.Fatalf("second %d after leaving the tried level: moved to %d within levelRetry", i, lvl)
		}
	}
	c.at = c.at.Add(levelRetry)
	c.acked += uint64(200 * mbit * levelRetry.Seconds())
	tryThree("after levelRetry")

	// A level reached by the estimates and left by them is not barred: they may move back.
	c = newLevelClock(t)
	c.l.calibrated(testCal)
	if lvl, changed = c.second(20*mbit, 0.001); lvl != 7 || !changed {
		t.Fatalf("calibrated on 20 mbit: level %d changed %v, want 7", lvl, changed)
	}
	for range 3 {
		c.second(8000*mbit, 0.001)
	}
	if c.l.ceiling != len(adaptLevels) {
		t.Fatalf("left an estimated level: ceiling %d, want none", c.l.ceiling)
	}
}

// TestLevelLinkRate: the drain rate is acked bytes per second over spans of at least
// linkEvery, its maximum aged with linkHalfLife; a counter that goes back restarts it.
func TestLevelLinkRate(t *testing.T) {
	l := newLevelPolicy()
	at := time.Unix(1000, 0)
	l.observeLink(1000, at)
	l.observeLink(2000, at.Add(linkEvery/2))
	if l.linkRate != 0 {
		t.Fatalf("rate from a span under linkEvery: %v", l.linkRate)
	}
	l.observeLink(1000+5_000_000, at.Add(linkEvery))
	if l.linkRate != 2_500_000 {
		t.Fatalf("rate %v, want 2.5e6", l.linkRate)
	}
	l.observeLink(1000+5_200_000, at.Add(2*linkEvery))
	if aged := 2_500_000 * math.Exp2(-linkEvery.Seconds()/linkHalfLife.Seconds()); math.Abs(l.linkRate-aged) > 1 {
		t.Fatalf("a light span left the maximum at %v, want it only aged, %v", l.linkRate, aged)
	}
	l.observeLink(1000+5_200_000, at.Add(2*linkEvery+2*linkHalfLife))
	if l.linkRate > 700_000 {
		t.Fatalf("two half-lives later the maximum is %v, want about a quarter", l.linkRate)
	}
	l.observeLink(5, at.Add(3*linkHalfLife))
	if l.linkAcked != 5 {
		t.Fatal("a counter that went back did not restart the span")
	}
}

// A 2 Mbit/s link (250 kB/s) whose acknowledgements arrive bunched: nothing for half a
// second, then the whole second's bytes at once, sampled every 100 ms for a minute. The
// drain rate must read the link, not the bunch (spans of half a second read 2×).
func TestLevelLinkRateBunchedAcks(t *testing.T) {
	l := newLevelPolicy()
	at, acked := time.Unix(1000, 0), uint64(0)
	for i := range 600 {
		if i%10 == 5 {
			acked += 250_000
		}
		l.observeLink(acked, at.Add(time.Duration(i)*100*time.Millisecond))
	}
	if l.linkRate < 200_000 || l.linkRate > 1.2*250_000 {
		t.Errorf("drain rate %.0f B/s on a 250 kB/s link with bunched acks", l.linkRate)
	}
}

// TestCalibrate: every level gets a speed and a ratio on compressible bytes; the sample is
// taken from the traffic once it is full and not again before calibEvery.
func TestCalibrate(t *testing.T) {
	var b bytes.Buffer
	for i := 0; b.Len() < calibSample; i++ {
		fmt.Fprintf(&b, "row %d|%d|name-%d|%d\n", i, i*7%1000, i%50, i*31)
	}
	cal := calibrate(b.Bytes()[:calibSample], adaptLevels)
	for i, c := range cal {
		t.Logf("level %d: %.0f MB/s of CPU, ratio %.2f", adaptLevels[i], c.speed/1e6, c.ratio)
		if c.speed <= 0 || c.ratio < 1.5 {
			t.Errorf("level %d: speed %.0f B/s ratio %.2f", adaptLevels[i], c.speed, c.ratio)
		}
	}
	cr := newCalibrator()
	at := time.Unix(1000, 0)
	cr.add(b.Bytes()[:calibSample/2], at)
	if _, ok := cr.poll(); ok || cr.running {
		t.Fatal("calibration started on half a sample")
	}
	cr.add(b.Bytes(), at)
	got := <-cr.out
	cr.running = false
	if len(got) != len(adaptLevels) {
		t.Fatalf("calibration has %d levels", len(got))
	}
	cr.add(b.Bytes(), at.Add(calibEvery/2))
	if cr.running || len(cr.sample) != 0 {
		t.Fatal("sampled again before calibEvery")
	}
}
