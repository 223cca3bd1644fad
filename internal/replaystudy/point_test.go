package replaystudy

import (
	"fmt"
	"math"
	"testing"

	"github.com/wirelab/wirelab/internal/replay"
	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/stats"
)

// fakeSummary is a replay's summary as the child prints it: 4 sessions, 204 statements
// in 14 transactions over 2.2 s at 20 ms RTT, 4 rejected SETs, 150 shapes.
func fakeSummary(speed string) *replay.Summary {
	hist := func(ms ...float64) stats.Histogram {
		var b []stats.Bucket
		for _, m := range ms {
			b = append(b, stats.Bucket{Ms: stats.BucketOf(m), Count: 10})
		}
		return stats.NewHistogram(b)
	}
	s := &replay.Summary{Engine: "mariadb", Speed: speed, Sessions: replay.SessionCounts{Replayed: 4, Failed: 1},
		Statements: 204, NotReplayed: 3, Transactions: 14, WallS: 2.2, Errors: 4,
		ErrorsByKind: []replay.KindErrors{{Kind: replay.KindSet, Count: 4, Samples: []replay.ErrorSample{{Line: 4, Message: "1227: Access denied"}}}},
		Statement:    replay.Latency{Count: 30, AvgMs: 21, MaxMs: 51, P50Ms: 20.7, P95Ms: 22.3, P99Ms: 24.8, Histogram: hist(20.7, 21, 22.3)},
		Transaction:  replay.Latency{Count: 14, AvgMs: 306, P50Ms: 412, P95Ms: 419, P99Ms: 450, MaxMs: 447, Histogram: hist(412)},
		Connect:      replay.Connect{Connections: 4, RoundTrips: 12, BytesOut: 736, BytesIn: 460, Latency: replay.Latency{P50Ms: 61}},
		RoundTrips:   replay.RoundTrips{Statements: 204, PerStatement: 1, PerTransaction: 14.57},
		Kinds: []replay.KindStat{{Kind: replay.KindSelect, Statements: 140, RoundTrips: 140, BytesOut: 6460, BytesIn: 394290, TimeMs: 2925},
			{Kind: replay.KindSet, Statements: 4, Errors: 4, RoundTrips: 4, BytesOut: 149, BytesIn: 384, TimeMs: 83}},
		Behind: replay.Behind{MaxS: 0.002, P95S: 0.0001}, Cost: replay.Cost{UserS: 0.05, SysS: 0.02, MaxRSSBytes: 26 << 20}}
	for i := range 150 {
		s.Shapes = append(s.Shapes, replay.ShapeStat{Shape: fmt.Sprintf("select c from t%d where id=?", i), Kind: replay.KindSelect,
			Count: 2, TimeMs: float64(300 - i), RoundTrips: 2, BytesOut: 90, BytesIn: 400})
	}
	return s
}

func TestFillPointFromASummary(t *testing.T) {
	o := testOptions()
	o.Speed = replay.SpeedMax
	p := result.Point{TPS: 6, QPS: 93, Profile: &result.Profile{RoundTrips: 15.5, LatAvgMs: 666, TPS: 6}}
	fillPoint(&p, fakeSummary("max"), o)
	if p.LatP50Ms == 0 || p.LatP95Ms < p.LatP50Ms || p.LatHistogram == nil || p.LatMaxMs != 51 || p.LatAvgMs != 21 || p.Errors != 4 {
		t.Errorf("the statements' latency and errors: p50 %g p95 %g max %g avg %g errors %d", p.LatP50Ms, p.LatP95Ms, p.LatMaxMs, p.LatAvgMs, p.Errors)
	}
	if p.Profile != nil {
		t.Errorf("a replay's point keeps a profile: %+v", p.Profile)
	}
	r := p.Replay
	if r.Log != "/logs/general.log" || r.Format != "mysql-general" || r.Speed != "max" || r.Sessions != 4 || r.SessionsFailed != 1 ||
		r.Statements != 204 || r.NotReplayed != 3 || r.Transactions != 14 || r.Errors() != 4 || r.ErrorsByKind[0].Samples[0].Line != 4 {
		t.Errorf("counts %+v", r)
	}
	if r.TxnLatP50Ms != 412 || r.TxnLatP99Ms != 450 || r.TxnLatHistogram == nil || r.RoundTripsPerTxn != 14.57 ||
		r.ConnectRoundTrips != 12 || r.Connections != 4 || r.ConnectLatP50Ms != 61 || r.WallS != 2.2 {
		t.Errorf("latency and round trips %+v", r)
	}
	if len(r.Kinds) != 2 || r.Kinds[0].Kind != "select" || r.Kinds[0].BytesIn != 394290 || r.Kinds[1].Errors != 4 {
		t.Errorf("kinds %+v", r.Kinds)
	}
	if len(r.Shapes) != result.ReplayShapeCap || !r.ShapesCut || r.Shapes[0].TimeMs != 300 {
		t.Errorf("%d shapes (cut %v), first %+v; want the %d that took the most", len(r.Shapes), r.ShapesCut, r.Shapes[0], result.ReplayShapeCap)
	}
	if r.CPUS < 0.0699 || r.CPUS > 0.0701 || r.MaxRSSBytes != 26<<20 || r.BehindP95S != 0.0001 {
		t.Errorf("the replayer's own cost %g s, %d bytes; behind %g", r.CPUS, r.MaxRSSBytes, r.BehindP95S)
	}
	if r.WireBytes() != 736+460+6460+394290+149+384 {
		t.Errorf("without the wire host's count, the protocol's bytes: %d", r.WireBytes())
	}
}

func TestTicksAndTotals(t *testing.T) {
	tk := tickOf(replay.Tick{T: 3, StatementsPerS: 90, TransactionsPerS: 6, ErrorsPerS: 1, LatP95Ms: 22})
	if tk.T != 3 || tk.QPS != 90 || tk.TPS != 6 || tk.Errors != 1 || tk.LatP95Ms != 22 {
		t.Errorf("tick %+v", tk)
	}
	s := fakeSummary("max")
	tot := totalsOf(s)
	if math.Abs(tot.TPS-14/2.2) > 1e-9 || math.Abs(tot.QPS-204/2.2) > 1e-9 || tot.Errors != 4 || tot.LatP95Ms != 22.3 || wall(s).Seconds() != 2.2 {
		t.Errorf("totals %+v, wall %s", tot, wall(s))
	}
	if tot := totalsOf(&replay.Summary{}); tot.TPS != 0 || tot.QPS != 0 {
		t.Errorf("an empty replay: %+v", tot)
	}
}
