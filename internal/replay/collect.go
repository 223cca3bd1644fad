package replay

import (
	"errors"
	"sort"
	"sync"

	"github.com/wirelab/wirelab/internal/stats"
)

// stmtRec is one replayed statement, as a session hands it to the collector.
type stmtRec struct {
	class Class
	line  int64
	latMs float64
	wire  wire
	rows  int64
	err   error
	// lateMs is how long after its schedule the statement started.
	lateMs float64
}

// txnRec is one finished transaction.
type txnRec struct {
	latMs      float64
	roundTrips int64
}

// collector adds up a replay's figures as sessions report them; it holds no per-statement
// state, so its memory does not grow with the log (shapes are capped at ShapeLimit).
type collector struct {
	mu                sync.Mutex
	statements, errs  int64
	txns, notReplayed int64
	stmt, txn, conn   latAcc
	behind            latAcc
	kinds             map[StatementKind]*KindStat
	kindErrs          map[StatementKind]*KindErrors
	shapes            map[string]*ShapeStat
	other             *ShapeStat
	txnRT             map[int64]int64
	txnRTSum          int64
	connect           Connect
	sessions          SessionCounts
	notConnected      []LoggedSession
	sec               second
	stmtRTSum         int64
}

// second is what the current second of ticks has so far.
type second struct {
	statements, txns, errs int64
	lat                    latAcc
	behindMs               float64
}

// latAcc adds latencies up on stats' histogram grid.
type latAcc struct {
	counts   map[float64]int64
	sum, max float64
}

func (a *latAcc) add(ms float64) {
	if a.counts == nil {
		a.counts = map[float64]int64{}
	}
	a.counts[stats.BucketOf(ms)]++
	a.sum += ms
	a.max = max(a.max, ms)
}

func (a *latAcc) histogram() stats.Histogram {
	b := make([]stats.Bucket, 0, len(a.counts))
	for ms, n := range a.counts {
		b = append(b, stats.Bucket{Ms: ms, Count: n})
	}
	return stats.NewHistogram(b)
}

func (a *latAcc) latency() Latency { return newLatency(a.histogram(), a.sum, a.max) }

func newCollector() *collector {
	return &collector{kinds: map[StatementKind]*KindStat{}, kindErrs: map[StatementKind]*KindErrors{},
		shapes: map[string]*ShapeStat{}, txnRT: map[int64]int64{}}
}

func (c *collector) statement(r stmtRec) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.statements++
	c.stmtRTSum += r.wire.RoundTrips
	c.stmt.add(r.latMs)
	c.behind.add(r.lateMs)
	c.sec.statements++
	c.sec.lat.add(r.latMs)
	c.sec.behindMs = max(c.sec.behindMs, r.lateMs)
	k := c.kinds[r.class.Kind]
	if k == nil {
		k = &KindStat{Kind: r.class.Kind}
		c.kinds[r.class.Kind] = k
	}
	k.Statements++
	k.Rows += r.rows
	k.RoundTrips += r.wire.RoundTrips
	k.BytesOut += r.wire.Out
	k.BytesIn += r.wire.In
	k.TimeMs += r.latMs
	s := c.shape(r.class)
	s.Count++
	s.TimeMs += r.latMs
	s.RoundTrips += r.wire.RoundTrips
	s.BytesOut += r.wire.Out
	s.BytesIn += r.wire.In
	if r.err != nil {
		c.errs++
		c.sec.errs++
		k.Errors++
		s.Errors++
		c.keepError(r.class.Kind, r.line, r.err)
	}
}

// shape is the row of a statement's shape: its own while fewer than ShapeLimit shapes
// have been seen, else the folded row.
func (c *collector) shape(cl Class) *ShapeStat {
	if s := c.shapes[cl.Shape]; s != nil {
		return s
	}
	if len(c.shapes) < ShapeLimit {
		s := &ShapeStat{Shape: cl.Shape, Kind: cl.Kind}
		c.shapes[cl.Shape] = s
		return s
	}
	if c.other == nil {
		c.other = &ShapeStat{Shape: OtherShapes, Kind: KindOther}
	}
	return c.other
}

func (c *collector) keepError(kind StatementKind, line int64, err error) {
	e := c.kindErrs[kind]
	if e == nil {
		e = &KindErrors{Kind: kind}
		c.kindErrs[kind] = e
	}
	e.Count++
	if len(e.Samples) < maxSamples {
		e.Samples = append(e.Samples, ErrorSample{Line: line, Message: errText(err)})
	}
}

// errText is an error as a summary quotes it: a lost connection says so.
func errText(err error) string {
	var se *serverError
	if errors.As(err, &se) {
		return se.Error()
	}
	return "connection lost: " + err.Error()
}

// maxTally is how many distinct round-trip counts RoundTrips.ByTransaction keeps.
const maxTally = 1000

func (c *collector) transaction(t txnRec) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.txns++
	c.sec.txns++
	c.txn.add(t.latMs)
	c.txnRTSum += t.roundTrips
	if _, ok := c.txnRT[t.roundTrips]; ok || len(c.txnRT) < maxTally {
		c.txnRT[t.roundTrips]++
	} else {
		c.txnRT[-1]++ // folded into the last row by summary
	}
}

// connected records one connect: its round trips (TCP's handshake included) and bytes.
func (c *collector) connected(ms float64, w wire) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.connect.Connections++
	c.connect.RoundTrips += w.RoundTrips
	c.connect.BytesOut += w.Out
	c.connect.BytesIn += w.In
	c.conn.add(ms)
}

// sessionEnded counts a session by how it ended.
func (c *collector) sessionEnded(f *SessionFigures, reconnected bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.notReplayed += f.NotReplayed
	if reconnected {
		c.sessions.Reconnected++
	}
	switch {
	case f.Failed != "":
		c.sessions.Failed++
		if len(c.sessions.FailedSamples) < maxSamples {
			c.sessions.FailedSamples = append(c.sessions.FailedSamples, ErrorSample{Line: f.Line, Message: f.Failed})
		}
	case f.Connects == 0 && f.NotReplayed > 0 || f.Connects == 0 && f.Statements == 0:
		c.sessions.NotStarted++
	default:
		c.sessions.Replayed++
	}
}

// loginFailedInLog counts a session the log shows failing to log in.
func (c *collector) loginFailedInLog(s LoggedSession, statements int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sessions.NotConnected++
	c.notReplayed += statements
	if len(c.notConnected) < 100 {
		c.notConnected = append(c.notConnected, s)
	}
}

// rest counts the statements and sessions of the log after --for: not replayed.
func (c *collector) rest(statements, sessions int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.notReplayed += statements
	c.sessions.NotStarted += sessions
}

// tick ends the current second: its figures per second over dt seconds.
func (c *collector) tick(t, dt float64) Tick {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.sec
	c.sec = second{}
	return Tick{T: t, StatementsPerS: float64(s.statements) / dt, TransactionsPerS: float64(s.txns) / dt,
		ErrorsPerS: float64(s.errs) / dt, LatP95Ms: s.lat.histogram().Percentile(95), BehindS: s.behindMs / 1000}
}

// summary is everything so far; the caller adds what the collector does not know (the
// server, the wall time, the cost, why the replay stopped).
func (c *collector) summary() Summary {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := Summary{Statements: c.statements, NotReplayed: c.notReplayed, Transactions: c.txns, Errors: c.errs,
		Statement: c.stmt.latency(), Transaction: c.txn.latency(), Connect: c.connect, Sessions: c.sessions,
		NotConnected: c.notConnected}
	s.Connect.Latency = c.conn.latency()
	bh := c.behind.histogram()
	s.Behind = Behind{MaxS: c.behind.max / 1000, P95S: bh.Percentile(95) / 1000, Histogram: bh}
	s.RoundTrips = c.roundTrips()
	for _, k := range c.kinds {
		s.Kinds = append(s.Kinds, *k)
	}
	sort.Slice(s.Kinds, func(i, j int) bool { return s.Kinds[i].Statements > s.Kinds[j].Statements })
	for _, e := range c.kindErrs {
		s.ErrorsByKind = append(s.ErrorsByKind, *e)
	}
	sort.Slice(s.ErrorsByKind, func(i, j int) bool { return s.ErrorsByKind[i].Count > s.ErrorsByKind[j].Count })
	for _, sh := range c.shapes {
		s.Shapes = append(s.Shapes, *sh)
	}
	if c.other != nil {
		s.Shapes, s.ShapesFolded = append(s.Shapes, *c.other), true
	}
	sort.Slice(s.Shapes, func(i, j int) bool { return s.Shapes[i].TimeMs > s.Shapes[j].TimeMs })
	return s
}

func (c *collector) roundTrips() RoundTrips {
	r := RoundTrips{Statements: c.stmtRTSum}
	if c.statements > 0 {
		r.PerStatement = float64(c.stmtRTSum) / float64(c.statements)
	}
	if c.txns > 0 {
		r.PerTransaction = float64(c.txnRTSum) / float64(c.txns)
	}
	for n, t := range c.txnRT {
		if n >= 0 {
			r.ByTransaction = append(r.ByTransaction, Tally{RoundTrips: n, Transactions: t})
		}
	}
	sort.Slice(r.ByTransaction, func(i, j int) bool { return r.ByTransaction[i].RoundTrips < r.ByTransaction[j].RoundTrips })
	if folded := c.txnRT[-1]; folded > 0 && len(r.ByTransaction) > 0 {
		r.ByTransaction[len(r.ByTransaction)-1].Transactions += folded
	}
	return r
}
