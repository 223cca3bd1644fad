package result

import (
	"math"
	"testing"

	"github.com/wirelab/wirelab/internal/stats"
)

// probe is a max-load point at target q on a 2 Mbit link: wire bytes per query wpq over a
// 20 s load; a failing probe ran the link full (network) or not (latency).
func probe(ch string, q float64, ok bool, wpq float64, bottleneck string) Point {
	p := Point{Series: MaxLoadSeries, Channel: ch, QPS: q, LinkRateBps: 2_000_000,
		Replication: &ReplicationStats{TargetQPS: q, Bounded: ok, ChecksumOK: true, LoadS: 20,
			WireDownBytesTotal: int64(wpq * q * 20)}}
	if !ok {
		p.Bottleneck = bottleneck
	}
	return p
}

func TestMaxLoadsFitAndLink(t *testing.T) {
	// 2 Mbit/s = 250000 B/s at 400 B a query: the link carries 625 QPS.
	native := []Point{probe("native", 540, true, 400, ""), probe("native", 648, false, 400, "network"),
		probe("native", 594, true, 400, ""), probe("native", 618, true, 400, ""), probe("native", 630, false, 400, "network"),
		probe("native", 618, false, 400, "network"), probe("native", 612, true, 400, "")}
	// The tunnel's failing probes left the link idle: latency, not the link, is its limit.
	tunnel := []Point{probe("tunnel", 1200, true, 100, ""), probe("tunnel", 1440, false, 100, "latency"),
		probe("tunnel", 1320, true, 100, ""), probe("tunnel", 1380, false, 100, "latency")}
	es := MaxLoads(append(native, tunnel...))
	nat, tun := es[0], es[1]
	if nat.Est < 594 || nat.Est > 648 || nat.Lo >= nat.Est || nat.Hi <= nat.Est || nat.Limit != 612 || nat.FirstFailed != 618 {
		t.Errorf("native edge %+v: want a fit between the outcomes, probed bracket 612–618", nat)
	}
	if math.Abs(nat.LinkQPS-625) > 0.5 || nat.LinkDisagrees {
		t.Errorf("native link %v (disagrees %v), want 625 and agreeing", nat.LinkQPS, nat.LinkDisagrees)
	}
	if tun.LinkQPS != 0 || tun.LinkDisagrees {
		t.Errorf("tunnel: link cross-check %v set where latency was the limit", tun.LinkQPS)
	}
	// The ratio of the fits, its interval wider than either fit's own.
	r := tun.Over(nat)
	if !r.Known || math.Abs(r.Ratio-tun.Est/nat.Est) > 1e-9 || r.Lo/r.Ratio > nat.Lo/nat.Est || r.Hi/r.Ratio < tun.Hi/tun.Est {
		t.Errorf("over %+v for %+v ÷ %+v", r, tun, nat)
	}

	// The same native probes at 560 B a query: the link carries 446 QPS, 30% under the
	// search's limit, and the edge says so.
	var heavy []Point
	for _, p := range native {
		heavy = append(heavy, probe("native", p.Replication.TargetQPS, p.Replication.Bounded, 560, "network"))
	}
	if e := MaxLoads(heavy)[0]; !e.LinkDisagrees || math.Abs(e.LinkQPS-446.4) > 0.5 {
		t.Errorf("heavy: link %v disagrees %v, want 446 flagged", e.LinkQPS, e.LinkDisagrees)
	}
}

// bandwidthPoint is a bandwidth-scenario point at 300 QPS whose second i ran qps[i]
// queries at bpq wire bytes each.
func bandwidthPoint(ch string, qps []float64, bpq float64) Point {
	p := Point{Series: BandwidthSeries, Channel: ch, Replication: &ReplicationStats{TargetQPS: 300, Bounded: true,
		ChecksumOK: true, LoadS: float64(len(qps))}}
	for i, q := range qps {
		p.Seconds = append(p.Seconds, Second{T: float64(i + 1), QPS: q, WireDownBps: q * bpq})
		p.QPS += q / float64(len(qps))
		p.WireBytesPerSDown += q * bpq / float64(len(qps))
	}
	return p
}

// Two points at the same target load whose arrivals differ (native's run drew 8% fewer
// queries, and its seconds swing ±17%): per query, the tunnel's 100 B against native's
// 400 B is 0.25× with a tight interval; a comparison of bytes per second would read
// 0.27× and carry the swings.
func TestWireVsNativeIsPerQuery(t *testing.T) {
	var nq, tq []float64
	for i := range 16 {
		nq = append(nq, 276+48*float64(i%2*2-1))
		tq = append(tq, 300+float64(i%3))
	}
	ws := WireVsNative([]Point{bandwidthPoint("native", nq, 400), bandwidthPoint("tunnel", tq, 100)}, stats.DefaultMargin)
	if len(ws) != 1 {
		t.Fatalf("got %d ratios, want 1", len(ws))
	}
	c := ws[0].Ratio
	if !c.Bounded || math.Abs(c.Ratio-0.25) > 1e-9 || c.Lo < 0.249 || c.Hi > 0.251 {
		t.Errorf("ratio %.4f (%.4f–%.4f, bounded %v), want 0.25 with a tight interval", c.Ratio, c.Lo, c.Hi, c.Bounded)
	}
	if c.A.Mean != 400 || c.B.Mean != 100 {
		t.Errorf("bytes per query native %v, tunnel %v; want 400 and 100", c.A.Mean, c.B.Mean)
	}
}

// The load generator's report ends a second before the wire's series: a last second of
// bytes with no queries beside it is left out, not counted as a batch at twice the rest.
func TestWirePerQueryDropsTheUnreportedLastSecond(t *testing.T) {
	p := bandwidthPoint("tunnel", []float64{300, 290, 310, 300, 295, 305, 300, 300, 310, 290, 300, 300, 300, 300}, 100)
	p.Seconds = append(p.Seconds, Second{T: 15, WireDownBps: 30000})
	p.Replication.LoadS = 15
	e := p.wirePerQuery()
	// No spread beyond the counts' resolution (SeriesRatio's floor, under 0.1 B here); the
	// unreported second would have put one batch at half as much again.
	if e.Mean != 100 || e.SE > 0.1 || !e.Known() {
		t.Errorf("%+v, want 100 B a query with no spread but the counts' resolution", e)
	}
}

// A search without a fit quotes the load its passing probes delivered, not their target:
// two probes at 600 QPS that delivered 597 and 588 sustained 588.
func TestSustainedQuotesDelivered(t *testing.T) {
	pt := func(q, qps float64, ok bool) Point {
		return Point{Series: MaxLoadSeries, Channel: "native", QPS: qps,
			Replication: &ReplicationStats{TargetQPS: q, Bounded: ok, ChecksumOK: true}}
	}
	e := MaxLoads([]Point{pt(300, 303, true), pt(600, 597, true), pt(600, 588, true)})[0]
	if e.Est != 0 || e.Limit != 600 || e.Delivered != 588 || e.Sustained() != 588 {
		t.Errorf("edge %+v sustains %v; want no fit, target 600, delivered 588", e, e.Sustained())
	}
	if (Edge{Limit: 600}).Sustained() != 600 {
		t.Error("an edge whose delivered load is not known does not quote its target")
	}
}

// Without fits, the ratio of two limits is the ratio of their delivered loads, in the
// range the delivered brackets allow; a passing probe that delivered more than the failing
// one above it still leaves the ratio inside its range.
func TestOverOnDeliveredBrackets(t *testing.T) {
	e := Edge{Limit: 600, FirstFailed: 700, Delivered: 590, FailedDelivered: 690}
	base := Edge{Limit: 300, FirstFailed: 400, Delivered: 297, FailedDelivered: 395}
	r := e.Over(base)
	if !r.Known || math.Abs(r.Ratio-590.0/297) > 1e-12 || math.Abs(r.Lo-590.0/395) > 1e-12 || math.Abs(r.Hi-690.0/297) > 1e-12 {
		t.Errorf("over %+v", r)
	}
	e.FailedDelivered = 580 // delivered less than the passing probe below it
	if r := e.Over(base); r.Lo > r.Ratio || r.Hi < r.Ratio {
		t.Errorf("over %+v: the range leaves out the ratio", r)
	}
}
