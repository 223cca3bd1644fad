package replay

import (
	"github.com/wirelab/wirelab/internal/stats"
)

// Tick is one second of a replay, printed as it ends.
type Tick struct {
	T                float64 `json:"t"` // seconds since the replay began, at the second's end
	StatementsPerS   float64 `json:"statements_per_s"`
	TransactionsPerS float64 `json:"transactions_per_s"`
	ErrorsPerS       float64 `json:"errors_per_s"`
	// LatP95Ms is the 95th percentile of the statements that ended in this second.
	LatP95Ms float64 `json:"lat_p95_ms"`
	// BehindS is how late the latest-started statement of the second started against
	// its schedule.
	BehindS float64 `json:"behind_s"`
}

// Summary is a whole replay, printed by the child when it ends.
type Summary struct {
	Engine        string `json:"engine"`
	ServerVersion string `json:"server_version"`
	Speed         string `json:"speed"` // as --speed spells it
	// Stopped says why the replay ended before the log did ("" = it did not).
	Stopped string `json:"stopped,omitempty"`
	// LastLine is the last log line read.
	LastLine int64         `json:"last_line"`
	Sessions SessionCounts `json:"sessions"`
	// Statements were sent to the server; NotReplayed were in the log and were not (the
	// replay stopped, their session's login failed in the log or its connection was lost
	// twice).
	Statements   int64   `json:"statements"`
	NotReplayed  int64   `json:"not_replayed,omitempty"`
	Transactions int64   `json:"transactions"`
	WallS        float64 `json:"wall_s"`
	// Errors counts statements the server rejected and statements whose connection was
	// lost, by statement kind in ErrorsByKind.
	Errors       int64        `json:"errors"`
	ErrorsByKind []KindErrors `json:"errors_by_kind,omitempty"`
	// Statement runs from a statement's send to the last byte of its reply; Transaction
	// from its first statement's send to its last reply, less the think time waited
	// inside it.
	Statement   Latency `json:"statement_latency"`
	Transaction Latency `json:"transaction_latency"`
	Connect     Connect `json:"connect"`
	// RoundTrips are the statements' (not the connects'): in all, and per transaction.
	RoundTrips RoundTrips `json:"round_trips"`
	Kinds      []KindStat `json:"kinds"`
	// Shapes are the statement shapes (literals stripped), the most time first; they
	// travel from the child as lines of their own. After ShapeLimit distinct shapes, the
	// statements of new ones are folded into one row named OtherShapes.
	Shapes       []ShapeStat `json:"shapes,omitempty"`
	ShapesFolded bool        `json:"shapes_folded,omitempty"`
	Behind       Behind      `json:"behind"`
	// BadLines were skipped by the reader (--skip-bad-lines).
	BadLines int64 `json:"bad_lines,omitempty"`
	// NotConnected are sessions whose log shows a failed login: not replayed.
	NotConnected []LoggedSession `json:"not_connected,omitempty"`
	// Cost is the replayer's own: CPU seconds and peak memory. With --for, WallS and the
	// CPU seconds end when the replay stopped, before the rest of the log was read to
	// count what was not replayed.
	Cost Cost `json:"cost"`
}

// SessionCounts counts the log's sessions by what became of them.
type SessionCounts struct {
	Replayed int64 `json:"replayed"`
	// Failed could not connect, or lost their connection a second time.
	Failed int64 `json:"failed,omitempty"`
	// NotConnected never logged in when captured (the log shows the failed login).
	NotConnected int64 `json:"not_connected,omitempty"`
	// NotStarted were still to start when the replay stopped.
	NotStarted  int64 `json:"not_started,omitempty"`
	Reconnected int64 `json:"reconnected,omitempty"`
	// FailedSamples are the first few failures' messages.
	FailedSamples []ErrorSample `json:"failed_samples,omitempty"`
}

// Latency is a distribution on stats' histogram grid, and the figures read from it.
type Latency struct {
	Count     int64           `json:"count"`
	AvgMs     float64         `json:"avg_ms"`
	MaxMs     float64         `json:"max_ms"`
	P50Ms     float64         `json:"p50_ms"`
	P95Ms     float64         `json:"p95_ms"`
	P99Ms     float64         `json:"p99_ms"`
	Histogram stats.Histogram `json:"histogram"`
}

// newLatency computes a Latency's figures from its histogram, its sum and its maximum:
// the one place they are computed.
func newLatency(h stats.Histogram, sumMs, maxMs float64) Latency {
	l := Latency{Count: h.Count(), MaxMs: maxMs, Histogram: h,
		P50Ms: h.Percentile(50), P95Ms: h.Percentile(95), P99Ms: h.Percentile(99)}
	if l.Count > 0 {
		l.AvgMs = sumMs / float64(l.Count)
	}
	return l
}

// Connect is what the sessions' connects cost, logins and TLS handshakes included.
type Connect struct {
	Connections int64 `json:"connections"`
	// RoundTrips counts TCP's handshake (1 per TCP connection) and the login's turns.
	RoundTrips int64   `json:"round_trips"`
	BytesOut   int64   `json:"bytes_out"`
	BytesIn    int64   `json:"bytes_in"`
	Latency    Latency `json:"latency"`
}

// RoundTrips are the statements' round trips.
type RoundTrips struct {
	Statements     int64   `json:"statements"`
	PerStatement   float64 `json:"per_statement"`
	PerTransaction float64 `json:"per_transaction"`
	// ByTransaction counts transactions by their round trips, fewest first; past
	// maxTally distinct counts the rest are added to the last row's.
	ByTransaction []Tally `json:"by_transaction,omitempty"`
}

// Tally is how many transactions made RoundTrips round trips.
type Tally struct {
	RoundTrips   int64 `json:"round_trips"`
	Transactions int64 `json:"transactions"`
}

// KindStat is what one kind of statement did and cost.
type KindStat struct {
	Kind       StatementKind `json:"kind"`
	Statements int64         `json:"statements"`
	Errors     int64         `json:"errors,omitempty"`
	Rows       int64         `json:"rows"`
	RoundTrips int64         `json:"round_trips"`
	BytesOut   int64         `json:"bytes_out"`
	BytesIn    int64         `json:"bytes_in"`
	TimeMs     float64       `json:"time_ms"`
}

// KindErrors are the errors of one kind of statement.
type KindErrors struct {
	Kind    StatementKind `json:"kind"`
	Count   int64         `json:"count"`
	Samples []ErrorSample `json:"samples,omitempty"`
}

// ErrorSample is one error and the log line of its statement (or session).
type ErrorSample struct {
	Line    int64  `json:"line"`
	Message string `json:"message"`
}

// ShapeStat is what one statement shape did and cost.
type ShapeStat struct {
	Shape      string        `json:"shape"`
	Kind       StatementKind `json:"kind"`
	Count      int64         `json:"count"`
	Errors     int64         `json:"errors,omitempty"`
	TimeMs     float64       `json:"time_ms"`
	RoundTrips int64         `json:"round_trips"`
	BytesOut   int64         `json:"bytes_out"`
	BytesIn    int64         `json:"bytes_in"`
}

// OtherShapes names the row that holds the statements of shapes past ShapeLimit.
const OtherShapes = "(other shapes)"

// ShapeLimit is how many distinct shapes a summary keeps apart.
const ShapeLimit = 2000

// Behind is how late statements started against their schedule: the replayer's own lag
// (timer wake-ups, a reader that could not keep ahead, a busy machine), not the server's.
type Behind struct {
	MaxS float64 `json:"max_s"`
	P95S float64 `json:"p95_s"`
	// Histogram is the lateness in ms, on stats' grid.
	Histogram stats.Histogram `json:"histogram"`
}

// LoggedSession is a session of the log, named by its id and first line.
type LoggedSession struct {
	Session string `json:"session"`
	Line    int64  `json:"line"`
}

// Cost is the replayer's own use of the machine.
type Cost struct {
	UserS       float64 `json:"user_s"`
	SysS        float64 `json:"sys_s"`
	MaxRSSBytes int64   `json:"max_rss_bytes"`
}

// SessionFigures is one session of a replay, a line of the sessions file.
type SessionFigures struct {
	Session string `json:"session"`
	Line    int64  `json:"line"` // the session's first log line
	// Statements were replayed; Errors of them failed.
	Statements   int64 `json:"statements"`
	Errors       int64 `json:"errors,omitempty"`
	NotReplayed  int64 `json:"not_replayed,omitempty"`
	Transactions int64 `json:"transactions"`
	// RoundTrips are the statements'; ConnectRoundTrips the connects' (TCP's handshake
	// included).
	RoundTrips        int64   `json:"round_trips"`
	ConnectRoundTrips int64   `json:"connect_round_trips"`
	Connects          int     `json:"connects"`
	ConnectMs         float64 `json:"connect_ms"`
	// SessionMs runs from the start of its connect to the end of its last statement.
	SessionMs float64 `json:"session_ms"`
	Failed    string  `json:"failed,omitempty"`
}

// maxSamples is how many messages a list of errors keeps.
const maxSamples = 5
