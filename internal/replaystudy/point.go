package replaystudy

import (
	"time"

	"github.com/wirelab/wirelab/internal/replay"
	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/study"
)

// tickOf is a replay's second as FillSeries takes it: statements per second as QPS,
// transactions per second as TPS.
func tickOf(t replay.Tick) study.Tick {
	return study.Tick{T: t.T, TPS: t.TransactionsPerS, QPS: t.StatementsPerS, LatP95Ms: t.LatP95Ms, Errors: t.ErrorsPerS}
}

// totalsOf are a replay's whole-run rates, the point's figures when it ran less than a
// second (no tick).
func totalsOf(s *replay.Summary) *study.Totals {
	t := &study.Totals{Errors: s.Errors, LatP95Ms: s.Statement.P95Ms, LatAvgMs: s.Statement.AvgMs}
	if s.WallS > 0 {
		t.TPS, t.QPS = float64(s.Transactions)/s.WallS, float64(s.Statements)/s.WallS
	}
	return t
}

// wall is a replay's wall time.
func wall(s *replay.Summary) time.Duration { return time.Duration(s.WallS * float64(time.Second)) }

// fillPoint puts a replay's own figures in p, whose series, means and verdict
// MeasurePaced filled: the statements' latency in the point's latency fields, errors,
// and everything else in p.Replay. A replay's point keeps no per-transaction profile:
// its sessions start, idle and end as captured, not a fixed number of closed loops the
// queueing model could take (result.NoProfileWhy).
func fillPoint(p *result.Point, s *replay.Summary, o Options) {
	p.SetLatency(s.Statement.Histogram, s.Statement.MaxMs)
	p.LatAvgMs, p.Errors = s.Statement.AvgMs, s.Errors
	p.Replay = statsOf(s, o)
	p.Profile = nil
}

// statsOf is a replay's summary as results.json keeps it.
func statsOf(s *replay.Summary, o Options) *result.ReplayStats {
	r := &result.ReplayStats{Log: o.Log.Path, Format: string(o.Log.Format), Speed: s.Speed, Stopped: s.Stopped,
		Sessions: s.Sessions.Replayed, SessionsFailed: s.Sessions.Failed, SessionsNotConnected: s.Sessions.NotConnected,
		SessionsNotStarted: s.Sessions.NotStarted, Statements: s.Statements, NotReplayed: s.NotReplayed,
		Transactions: s.Transactions, BadLines: s.BadLines,
		TxnLatAvgMs: s.Transaction.AvgMs, TxnLatP50Ms: s.Transaction.P50Ms, TxnLatP95Ms: s.Transaction.P95Ms,
		TxnLatP99Ms: s.Transaction.P99Ms, TxnLatMaxMs: s.Transaction.MaxMs,
		RoundTripsPerTxn: s.RoundTrips.PerTransaction, RoundTripsPerStatement: s.RoundTrips.PerStatement,
		Connections: s.Connect.Connections, ConnectRoundTrips: s.Connect.RoundTrips, ConnectLatP50Ms: s.Connect.Latency.P50Ms,
		ConnectBytesOut: s.Connect.BytesOut, ConnectBytesIn: s.Connect.BytesIn,
		WallS: s.WallS, BehindMaxS: s.Behind.MaxS, BehindP95S: s.Behind.P95S,
		CPUS: s.Cost.UserS + s.Cost.SysS, MaxRSSBytes: s.Cost.MaxRSSBytes}
	if h := s.Transaction.Histogram; !h.Empty() {
		r.TxnLatHistogram = &h
	}
	for _, e := range s.ErrorsByKind {
		ke := result.ReplayKindErrors{Kind: string(e.Kind), Count: e.Count}
		for _, x := range e.Samples {
			ke.Samples = append(ke.Samples, result.ReplayError{Line: x.Line, Message: x.Message})
		}
		r.ErrorsByKind = append(r.ErrorsByKind, ke)
	}
	for _, k := range s.Kinds {
		r.Kinds = append(r.Kinds, result.ReplayKind{Kind: string(k.Kind), Statements: k.Statements, Errors: k.Errors,
			Rows: k.Rows, RoundTrips: k.RoundTrips, BytesOut: k.BytesOut, BytesIn: k.BytesIn, TimeMs: k.TimeMs})
	}
	for i, sh := range s.Shapes {
		if i == result.ReplayShapeCap {
			r.ShapesCut = true
			break
		}
		r.Shapes = append(r.Shapes, result.ReplayShape{Shape: sh.Shape, Kind: string(sh.Kind), Count: sh.Count, Errors: sh.Errors,
			TimeMs: sh.TimeMs, RoundTrips: sh.RoundTrips, BytesOut: sh.BytesOut, BytesIn: sh.BytesIn})
	}
	r.ShapesCut = r.ShapesCut || s.ShapesFolded
	return r
}
