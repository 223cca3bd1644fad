package result

import (
	"math"
	"slices"
	"sort"

	"github.com/wirelab/wirelab/internal/stats"
)

// ReplayStats are a replay's own figures for one point (`wirelab replay`): what was
// replayed of the captured log, what each statement and transaction took, what the
// protocol carried and how many round trips it made, per statement kind and shape, and
// what the replayer itself cost. The point's own fields hold the rest: QPS is statements
// per second, TPS transactions per second, lat_p50_ms/lat_p95_ms/lat_p99_ms/lat_avg_ms
// and lat_histogram the statements' latency, errors the statements that failed, threads
// the log's sessions; wire bytes, CPU, the verdict and the lab's cost as in any point, and
// no per-transaction profile (NoProfileWhy).
type ReplayStats struct {
	Log    string `json:"log"`    // the replayed log's path
	Format string `json:"format"` // mysql-general, mysql-slow, pg-stderr, pg-csv
	Speed  string `json:"speed"`  // as --speed spells it: 1, 10, max
	// Stopped says why the replay ended before the log did ("" = it did not): --for, an
	// interrupt, a fatal error.
	Stopped string `json:"stopped,omitempty"`

	Sessions       int64 `json:"sessions"`                  // replayed
	SessionsFailed int64 `json:"sessions_failed,omitempty"` // could not connect, or lost the connection twice
	// SessionsNotConnected never logged in when captured: the log shows the failed login.
	SessionsNotConnected int64 `json:"sessions_not_connected,omitempty"`
	SessionsNotStarted   int64 `json:"sessions_not_started,omitempty"` // still to start when the replay stopped
	Statements           int64 `json:"statements"`                     // sent to the server
	NotReplayed          int64 `json:"not_replayed,omitempty"`         // in the log and not sent
	Transactions         int64 `json:"transactions"`
	BadLines             int64 `json:"bad_lines,omitempty"` // skipped (--skip-bad-lines)
	// ErrorsByKind are the statements the server rejected or whose connection was lost,
	// by statement kind, with the first few messages and their log lines.
	ErrorsByKind []ReplayKindErrors `json:"errors_by_kind,omitempty"`

	// The transactions' latency, from the first statement's send to the last reply, less
	// the think time waited inside them.
	TxnLatAvgMs     float64          `json:"txn_lat_avg_ms"`
	TxnLatP50Ms     float64          `json:"txn_lat_p50_ms"`
	TxnLatP95Ms     float64          `json:"txn_lat_p95_ms"`
	TxnLatP99Ms     float64          `json:"txn_lat_p99_ms"`
	TxnLatMaxMs     float64          `json:"txn_lat_max_ms"`
	TxnLatHistogram *stats.Histogram `json:"txn_lat_histogram,omitempty"`

	// Round trips from the protocol: the statements' (each request that waited for its
	// reply) per transaction and per statement, and the connects' (TCP's handshake and the
	// login's turns, TLS's included) in all.
	RoundTripsPerTxn       float64 `json:"round_trips_per_txn"`
	RoundTripsPerStatement float64 `json:"round_trips_per_statement"`
	Connections            int64   `json:"connections"`
	ConnectRoundTrips      int64   `json:"connect_round_trips"`
	ConnectLatP50Ms        float64 `json:"connect_lat_p50_ms,omitempty"`
	// ConnectBytesOut/In are what the connects sent and received (logins, TLS handshakes).
	ConnectBytesOut int64 `json:"connect_bytes_out,omitempty"`
	ConnectBytesIn  int64 `json:"connect_bytes_in,omitempty"`

	// Kinds are the statements by kind (select, insert, begin, ...): what each sent and
	// received on the wire (the protocol's bytes, below TLS and compression), its rows,
	// round trips, errors and time.
	Kinds []ReplayKind `json:"kinds,omitempty"`
	// Shapes are the statement shapes (literals stripped) that took the most time, at most
	// ReplayShapeCap, most first; ShapesCut says more shapes were replayed than kept.
	Shapes    []ReplayShape `json:"shapes,omitempty"`
	ShapesCut bool          `json:"shapes_cut,omitempty"`

	// WireBytesUp and WireBytesDown are what crossed the shaped wire each way during the
	// whole replay (frames, as the wire host counts them: what a tunnel or compression
	// sent, headers included).
	WireBytesUp   int64 `json:"wire_bytes_up"`
	WireBytesDown int64 `json:"wire_bytes_down"`

	WallS float64 `json:"wall_s"` // the replay's wall time
	// BehindMaxS and BehindP95S are how late statements started against the log's
	// schedule (scaled by the speed): the replayer's own lag, not the server's.
	BehindMaxS float64 `json:"behind_max_s"`
	BehindP95S float64 `json:"behind_p95_s"`
	// CPUS and MaxRSSBytes are the replayer's own CPU-seconds (user + system) and its peak
	// resident memory.
	CPUS        float64 `json:"cpu_s"`
	MaxRSSBytes int64   `json:"max_rss_bytes"`

	// ResetS is how long putting the data back to the run's starting snapshot took before
	// this point (0 for the first point, which starts from it).
	ResetS float64 `json:"reset_s,omitempty"`
	// Checksums are every table's checksum after the replay (--checksums).
	Checksums []TableChecksum `json:"checksums,omitempty"`
	// SessionsFile is the file, in the results directory, with one JSON line per session:
	// its statements, transactions, round trips, connects and time.
	SessionsFile string `json:"sessions_file,omitempty"`
}

// ReplayShapeCap is how many statement shapes a point keeps.
const ReplayShapeCap = 100

// ReplayKindErrors are the errors of one statement kind.
type ReplayKindErrors struct {
	Kind    string        `json:"kind"`
	Count   int64         `json:"count"`
	Samples []ReplayError `json:"samples,omitempty"`
}

// ReplayError is one error and the log line of its statement (or session).
type ReplayError struct {
	Line    int64  `json:"line"`
	Message string `json:"message"`
}

// ReplayKind is what one kind of statement did and cost.
type ReplayKind struct {
	Kind       string  `json:"kind"`
	Statements int64   `json:"statements"`
	Errors     int64   `json:"errors,omitempty"`
	Rows       int64   `json:"rows"`
	RoundTrips int64   `json:"round_trips"`
	BytesOut   int64   `json:"bytes_out"` // client -> server
	BytesIn    int64   `json:"bytes_in"`  // server -> client
	TimeMs     float64 `json:"time_ms"`
}

// ReplayShape is what one statement shape did and cost.
type ReplayShape struct {
	Shape      string  `json:"shape"`
	Kind       string  `json:"kind"`
	Count      int64   `json:"count"`
	Errors     int64   `json:"errors,omitempty"`
	TimeMs     float64 `json:"time_ms"`
	RoundTrips int64   `json:"round_trips"`
	BytesOut   int64   `json:"bytes_out"`
	BytesIn    int64   `json:"bytes_in"`
}

// TableChecksum is one table's checksum: MariaDB's CHECKSUM TABLE, or on PostgreSQL the
// row count and the md5 of its rows' md5s in primary-key order.
type TableChecksum struct {
	Table    string `json:"table"`
	Checksum string `json:"checksum"`
}

// WireBytes are the bytes the replay put on the wire, both ways: the wire host's count,
// else (a file without it) the protocol's, the statements' and the connects'.
func (r *ReplayStats) WireBytes() int64 {
	if n := r.WireBytesUp + r.WireBytesDown; n > 0 {
		return n
	}
	n := r.ConnectBytesOut + r.ConnectBytesIn
	for _, k := range r.Kinds {
		n += k.BytesOut + k.BytesIn
	}
	return n
}

// Errors is every statement error of the point.
func (r *ReplayStats) Errors() int64 {
	var n int64
	for _, e := range r.ErrorsByKind {
		n += e.Count
	}
	return n
}

// replayUsable are pts' replay points that count, in run order.
func replayUsable(pts []Point) []Point {
	var out []Point
	for _, p := range pts {
		if p.Replay != nil && p.Usable() {
			out = append(out, p)
		}
	}
	return out
}

// ReplaySeries are the replay points' series, in order of first appearance.
func ReplaySeries(pts []Point) []string {
	var out []string
	for _, p := range pts {
		if p.Replay != nil && !slices.Contains(out, p.Series) {
			out = append(out, p.Series)
		}
	}
	return out
}

// ReplayAt is series' usable replay point on the wire of rate and one-way delay; ok is
// false when none was measured. It is the one place a replay point is looked up by its
// link.
func ReplayAt(pts []Point, series string, rateBps int64, delayMs float64) (Point, bool) {
	for _, p := range replayUsable(pts) {
		if p.Series == series && p.LinkRateBps == rateBps && math.Abs(p.LinkDelayMs-delayMs) < 1e-9 {
			return p, true
		}
	}
	return Point{}, false
}

// ReplaySpan is a series' fastest and slowest usable points: those whose statements took
// the least and the most time in all (the sum of their statement kinds' time), which is
// what the network costs the workload. ok is false with fewer than two points.
func ReplaySpan(pts []Point, series string) (fast, slow Point, ok bool) {
	var ps []Point
	for _, p := range replayUsable(pts) {
		if p.Series == series {
			ps = append(ps, p)
		}
	}
	if len(ps) < 2 {
		return Point{}, Point{}, false
	}
	total := func(p Point) float64 {
		var ms float64
		for _, k := range p.Replay.Kinds {
			ms += k.TimeMs
		}
		return ms
	}
	sort.SliceStable(ps, func(i, j int) bool { return total(ps[i]) < total(ps[j]) })
	return ps[0], ps[len(ps)-1], true
}

// ShapeCost is what the network cost one statement shape: its time at the slowest point
// less its time at the fastest.
type ShapeCost struct {
	Shape, Kind    string
	Count          int64
	FastMs, SlowMs float64
	CostMs         float64 // SlowMs - FastMs
	// Share is the shape's part of the cost of every shape present at both points.
	Share float64
}

// ShapeCosts are the shapes kept at both points by their cost, the costliest first; a
// shape kept at only one of them (past ReplayShapeCap) is left out, as its other time is
// not known. It is the one place a shape's cost is computed.
func ShapeCosts(fast, slow Point) []ShapeCost {
	if fast.Replay == nil || slow.Replay == nil {
		return nil
	}
	at := map[string]ReplayShape{}
	for _, s := range fast.Replay.Shapes {
		at[s.Shape] = s
	}
	var out []ShapeCost
	var sum float64
	for _, s := range slow.Replay.Shapes {
		f, ok := at[s.Shape]
		if !ok {
			continue
		}
		c := ShapeCost{Shape: s.Shape, Kind: s.Kind, Count: s.Count, FastMs: f.TimeMs, SlowMs: s.TimeMs, CostMs: s.TimeMs - f.TimeMs}
		out = append(out, c)
		sum += max(c.CostMs, 0)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].CostMs > out[j].CostMs })
	for i := range out {
		if sum > 0 {
			out[i].Share = max(out[i].CostMs, 0) / sum
		}
	}
	return out
}

// SeriesDelta is one series against another at the same link: what it did to the
// protocol's bytes and to the median transaction.
type SeriesDelta struct {
	Series, Base string
	RateBps      int64
	DelayMs      float64
	// BytesSaved is the share of the base's bytes on the wire (both ways, the whole
	// replay: WireBytes) the series did not send; negative when it sent more.
	BytesSaved float64
	// TxnP50Ms and BaseTxnP50Ms are the median transactions; DeltaMs is the series' less
	// the base's (negative: faster).
	TxnP50Ms, BaseTxnP50Ms, DeltaMs float64
}

// SeriesDeltas compares series with base at every link both were measured at, in the
// base's order. It is the one place what compression, TLS or the tunnel did to a replay
// is computed.
func SeriesDeltas(pts []Point, series, base string) []SeriesDelta {
	var out []SeriesDelta
	for _, b := range replayUsable(pts) {
		if b.Series != base {
			continue
		}
		s, ok := ReplayAt(pts, series, b.LinkRateBps, b.LinkDelayMs)
		if !ok {
			continue
		}
		d := SeriesDelta{Series: series, Base: base, RateBps: b.LinkRateBps, DelayMs: b.LinkDelayMs,
			TxnP50Ms: s.Replay.TxnLatP50Ms, BaseTxnP50Ms: b.Replay.TxnLatP50Ms, DeltaMs: s.Replay.TxnLatP50Ms - b.Replay.TxnLatP50Ms}
		if bb := b.Replay.WireBytes(); bb > 0 {
			d.BytesSaved = 1 - float64(s.Replay.WireBytes())/float64(bb)
		}
		out = append(out, d)
	}
	return out
}
