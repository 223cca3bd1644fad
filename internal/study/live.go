package study

import (
	"sync"
	"time"

	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/livemetrics"
	"github.com/wirelab/wirelab/internal/metrics"
	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/stats"
)

// Publisher receives each point's seconds while it is measured: the Session's Metrics,
// what --metrics-listen serves (a livemetrics.Endpoint). Second comes once a second, and
// once more when the measurement ends; Latency once per load driver, when it ends; End
// when the point's measurement is over. A nil Publisher publishes nothing and costs
// nothing: no loop runs and nothing more is read.
type Publisher interface {
	Second(livemetrics.Labels, livemetrics.Second)
	Latency(livemetrics.Labels, stats.Histogram)
	End(livemetrics.Labels)
}

// liveLabels name point p, measured on wire c, in what is published.
func liveLabels(p result.Point, c link.Condition) livemetrics.Labels {
	return livemetrics.Labels{Study: p.Study, Series: p.Series, Channel: p.Channel, Threads: p.Threads, Link: c.String()}
}

// liveFeed publishes one measurement (Env.sampled) while it runs, once a second: what the
// load drivers' per-second lines counted since the last second and their latest line,
// the sampler's totals' growth, and the delay line's CPU. It is the one place a
// point's seconds are known as they happen; FillSeries makes the point's series from the
// same lines and samples once it has ended.
type liveFeed struct {
	pub    Publisher
	labels livemetrics.Labels
	totals func() metrics.Totals // the sampler's, over the window so far
	delay  delayLineClock
	stop   chan struct{}
	done   chan struct{}
	last   metrics.Totals // at the last Second; the loop's own, then end's

	mu      sync.Mutex
	pending livemetrics.Second // the drivers' counts since the last Second
	drivers []*liveDriver
	fresh   bool // a driver's line came since the last Second
}

// startLive starts publishing the measurement of sides.Point with sampler s; nil (publish
// nothing) without a Publisher or a point.
func (e *Env) startLive(sides Sides, s Sampler) *liveFeed {
	if e.publish == nil || sides.Point == nil {
		return nil
	}
	f := &liveFeed{pub: e.publish, labels: liveLabels(*sides.Point, e.Cond), totals: s.Totals,
		delay: newDelayLineClock(e.Backend.Wire().DelayerStats), stop: make(chan struct{}), done: make(chan struct{})}
	go f.loop()
	return f
}

func (f *liveFeed) loop() {
	defer close(f.done)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-f.stop:
			return
		case <-t.C:
			f.publish()
		}
	}
}

// end stops the loop, publishes what came since its last second (the sampler stopped:
// its totals cover the whole window) and ends the point.
func (f *liveFeed) end() {
	if f == nil {
		return
	}
	close(f.stop)
	<-f.done
	f.publish()
	f.pub.End(f.labels)
}

// publish sends one Second: the drivers' counts since the last, their latest line merged
// when one came, and the growth of the sampler's totals and the delay line's CPU.
func (f *liveFeed) publish() {
	tot := f.totals()
	f.mu.Lock()
	s := f.pending
	f.pending = livemetrics.Second{}
	if f.fresh {
		last := make([]Tick, 0, len(f.drivers))
		for _, d := range f.drivers {
			if d.seen {
				last = append(last, d.last)
			}
		}
		t := mergeTicks(last)
		s.Driver = &livemetrics.DriverSecond{TPS: t.TPS, LatP95Ms: t.LatP95Ms, LatAvgMs: t.LatAvgMs}
		f.fresh = false
	}
	f.mu.Unlock()
	s.WireUpBytes = float64(tot.UpBytes - min(f.last.UpBytes, tot.UpBytes))
	s.WireDownBytes = float64(tot.DownBytes - min(f.last.DownBytes, tot.DownBytes))
	s.CPUServerS = max(tot.CPUServerSec-f.last.CPUServerSec, 0)
	s.CPUClientS = max(tot.CPUClientSec-f.last.CPUClientSec, 0)
	s.CPUMachineS = max(tot.CPUTotalSec-f.last.CPUTotalSec, 0)
	s.DelayLineCPUS = f.delay.since()
	f.last = tot
	f.pub.Second(f.labels, s)
}

// liveDriver is one load driver's run in a liveFeed (a client host's share of a point).
type liveDriver struct {
	f    *liveFeed
	t    float64 // its last line's T
	last Tick
	seen bool
}

// driver adds a load driver to the feed; nil (its methods do nothing) on a nil feed.
func (f *liveFeed) driver() *liveDriver {
	if f == nil {
		return nil
	}
	d := &liveDriver{f: f}
	f.mu.Lock()
	f.drivers = append(f.drivers, d)
	f.mu.Unlock()
	return d
}

// tick counts one per-second line: its rates over the time since the driver's last line.
func (d *liveDriver) tick(t Tick) {
	if d == nil {
		return
	}
	f := d.f
	f.mu.Lock()
	defer f.mu.Unlock()
	if dt := t.T - d.t; dt > 0 {
		f.pending.Transactions += t.TPS * dt
		f.pending.Queries += t.QPS * dt
		f.pending.Errors += t.Errors * dt
	}
	d.t, d.last, d.seen, f.fresh = t.T, t, true, true
}

// latency publishes the driver's histogram of its measured transactions, when it has one.
func (d *liveDriver) latency(h *stats.Histogram) {
	if d == nil || h == nil || h.Empty() {
		return
	}
	d.f.pub.Latency(d.f.labels, *h)
}

// delayLineClock reads the delay line's CPU as it grows, all of it as the point's lab cost
// charges it (costOf), where the wire has one on this machine (its stats file, which the
// delayer rewrites every second). The delay lines of --hosts clients are not read live:
// each reading would be an SSH round a second on a client being measured.
type delayLineClock struct {
	path string
	prev link.DelayerStats
	ok   bool
}

func newDelayLineClock(path string) delayLineClock {
	c := delayLineClock{path: path}
	c.since()
	return c
}

// since is the delay line's CPU seconds since the last call; 0 without a delay line,
// when its stats were not rewritten since, or when it restarted (the next call counts
// from the new one).
func (c *delayLineClock) since() float64 {
	if c.path == "" {
		return 0
	}
	now, err := link.ReadDelayerStats(c.path)
	if err != nil {
		return 0
	}
	cost, ok := link.CostBetween(c.prev, now)
	switch {
	case !c.ok || now.Pid != c.prev.Pid || now.CPUNs < c.prev.CPUNs:
		c.prev, c.ok = now, true
		return 0
	case !ok:
		return 0
	}
	c.prev = now
	return cost.CPU.Seconds()
}
