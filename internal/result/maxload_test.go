package result

import (
	"math"
	"testing"
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
