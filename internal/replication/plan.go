package replication

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/result"
)

// PointSpec is one measurement: a load on one channel under one wire.
type PointSpec struct {
	Scenario  string
	Channel   Channel
	Link      link.Condition
	TargetQPS int           // 0 = no rate cap (as fast as sysbench goes)
	Duration  time.Duration // load window
	// AbortLag stops the load early once lag passes it: the point is then unbounded
	// beyond doubt, and a shorter overload means a shorter catch-up.
	AbortLag time.Duration
	Fault    *Fault // drop the wire during the load (the fault test)
}

// Wire is the wire the point needs.
func (ps PointSpec) Wire() *link.Condition { return &ps.Link }

// Label names the point in progress lines.
func (ps PointSpec) Label() string {
	return ps.Scenario + " " + string(ps.Channel) + " " + itoa(ps.TargetQPS) + " qps"
}

// Expected is the load window plus a few seconds of catch-up and checksums.
func (ps PointSpec) Expected() time.Duration { return ps.Duration + 5*time.Second }

// Fault drops the replica's link At into the load, For a while.
type Fault struct {
	At, For time.Duration
	// Inject is the fault, when it is not the wire's drop: it returns what ends it, called
	// For later. What says what it does, for the run's note.
	Inject func(ctx context.Context) (end func() error, err error)
	What   string
}

// what says what f does.
func (f Fault) what() string {
	if f.What != "" {
		return f.What
	}
	return fmt.Sprintf("the wire to the replica dropped every packet for %s (iptables DROP in the wire host)", f.For)
}

// plan yields the chosen scenarios' points in order. The max-load search reads each
// probe's outcome from the point the Session measured for it (Study.last).
func (r *Study) plan(yield func(PointSpec) bool) {
	o := r.o
	for _, n := range o.Scenarios {
		var ok bool
		switch n {
		case 1:
			ok = r.lagVsRTT(yield)
		case 2:
			ok = r.maxLoad(yield)
		case 3:
			ok = r.each(yield, Bandwidth, link.Condition{Delay: o.Link.Delay, Jitter: o.Link.Jitter, LossPct: o.Link.LossPct}, o.Loads, nil)
		case 4:
			f := o.Fault
			ok = r.each(yield, FaultRun, o.Link, []int{o.LagQPS}, &f)
		}
		if !ok {
			return
		}
	}
}

// lagVsRTT is DTLE's scenario 1: fixed load, growing RTT, highest and p99 lag per channel.
func (r *Study) lagVsRTT(yield func(PointSpec) bool) bool {
	for _, rtt := range r.o.RTTs {
		c := r.o.Link.AtRTT(rtt)
		for _, ch := range r.o.Channels {
			if !yield(PointSpec{Scenario: LagVsRTT, Channel: ch, Link: c, TargetQPS: r.o.LagQPS,
				Duration: r.o.Duration, AbortLag: r.o.AbortLag}) {
				return false
			}
		}
	}
	return true
}

// each runs every channel at every load on one wire: DTLE's scenario 3 (bandwidth used by
// load, no rate cap) and the fault test (the wire drops mid-load; replication must heal).
func (r *Study) each(yield func(PointSpec) bool, scenario string, c link.Condition, loads []int, f *Fault) bool {
	for _, ch := range r.o.Channels {
		for _, q := range loads {
			ps := PointSpec{Scenario: scenario, Channel: ch, Link: c, TargetQPS: q, Duration: r.o.Duration, Fault: f}
			if f == nil {
				ps.AbortLag = r.o.AbortLag
			}
			if !yield(ps) {
				return false
			}
		}
	}
	if f != nil {
		r.e.Note("fault: on every channel %s, %s into the load; "+
			"each fault point passes when the replica caught up by itself and the %s matched.", f.what(), f.At, TermsFor(r.o.kind()).Checksum)
	}
	return true
}

// maxLoad is DTLE's scenario 2: per channel, the highest load whose lag stays bounded.
func (r *Study) maxLoad(yield func(PointSpec) bool) bool {
	for _, ch := range r.o.Channels {
		s := &Search{Start: r.searchStart(ch), Factor: r.o.SearchFactor, Min: QueriesPerTxn * 10,
			Max: float64(r.o.SearchMaxQPS), Precision: r.o.Precision, Step: QueriesPerTxn, MaxProbes: maxProbes, EdgeProbes: edgeProbes}
		for q, ok := s.Next(); ok; q, ok = s.Next() {
			if !yield(PointSpec{Scenario: MaxLoad, Channel: ch, Link: r.o.Link, TargetQPS: int(q),
				Duration: r.o.SearchDuration, AbortLag: r.o.AbortLag}) {
				return false
			}
			p := r.last()
			s.Record(q, p.DeliveredQPS(), p.SustainsLoad(), p.Replication != nil && p.Replication.SourceLimited)
		}
		if f := s.Limit(); f.OK {
			r.e.Progressf("max-load %s: limit %.0f QPS (95%% interval %.0f–%.0f)", ch, f.Est, f.Lo, f.Hi)
		} else {
			r.e.Progressf("max-load %s: no failing load found; highest passing %.0f QPS", ch, s.Best())
		}
	}
	return true
}

// searchStart puts a channel's first probe at 85% of the capacity its earlier points
// predict: the link's rate over the wire bytes one query took (load and catch-up). Without
// earlier points of the channel it falls back on native's binlog (WAL) bytes per query, and
// without those on the study's lag-scenario load.
func (r *Study) searchStart(ch Channel) float64 {
	rate := float64(r.o.Link.RateBps) / 8
	var binlog, binQueries float64
	var same []result.Point
	for _, p := range r.done {
		if !p.Usable() || p.QPS <= 0 || p.Replication == nil || p.Replication.TargetQPS == 0 {
			continue
		}
		if p.Channel == string(ch) {
			same = append(same, p)
		}
		if p.Replication.BinlogBytes > 0 {
			binlog += float64(p.Replication.BinlogBytes)
			binQueries += p.QPS * p.Replication.LoadS
		}
	}
	capQPS := result.LinkCapacityQPS(same, float64(r.o.Link.RateBps))
	switch {
	case rate == 0:
		return float64(r.o.LagQPS)
	case capQPS > 0:
		return r.round(0.85 * capQPS)
	case binQueries > 0:
		return r.round(0.5 * rate / (binlog / binQueries))
	}
	return float64(r.o.LagQPS)
}

func (r *Study) round(q float64) float64 {
	return math.Max(QueriesPerTxn*10, math.Round(q/QueriesPerTxn)*QueriesPerTxn)
}
