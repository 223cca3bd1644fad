package result

import (
	"math"
	"slices"

	"github.com/wirelab/wirelab/internal/stats"
)

// SyncStats are the sync study's figures for one point: the wire between the primary and
// its replica, what a commit took, and what the replica's side of the mode reported. The
// load driver runs beside the primary over its unix socket, so of a transaction only the
// commit's wait for the replica crosses the wire: the commit percentiles are the
// transaction's (LatP50Ms ...). Throughput, wire bytes each way (up = replica → primary,
// the acknowledgements; down = primary → replica, the log) and CPU (server = the primary
// and the driver, client = the replica) are the point's own fields.
type SyncStats struct {
	Mode          string  `json:"mode"`            // as Point.Series: "semisync-after-sync", "pg-on", ...
	Control       bool    `json:"control"`         // the engine's mode whose commit waits for no replica
	RTTMs         float64 `json:"rtt_ms"`          // the wire's round trip as asked
	RTTMeasuredMs float64 `json:"rtt_measured_ms"` // TCP echo replica → primary, median

	CommitP50Ms float64 `json:"commit_p50_ms"`
	CommitP95Ms float64 `json:"commit_p95_ms"`
	CommitP99Ms float64 `json:"commit_p99_ms"`
	// WireBytesPerTxn: both directions' bytes over the load window per transaction.
	WireBytesPerTxn float64 `json:"wire_bytes_per_txn,omitempty"`

	// Replica is the mode's own account of whether commits waited: MariaDB semi-sync's
	// Rpl_semi_sync_master_status, PostgreSQL's pg_stat_replication.sync_state.
	Replica string `json:"replica_state,omitempty"`
	// SyncedTx and AsyncTx: MariaDB semi-sync's commits acknowledged by the replica
	// (Rpl_semi_sync_master_yes_tx) and committed without it (…_no_tx) during the point.
	SyncedTx int64 `json:"synced_tx,omitempty"`
	AsyncTx  int64 `json:"async_tx,omitempty"`
	// FellBack: a synchronous mode committed without its replica during the point
	// (semi-sync timed out, or the standby was not synchronous): its figures are not the
	// mode's.
	FellBack bool `json:"fell_back,omitempty"`
	// Galera's flow control during the point: the fraction of it the writing node was
	// paused (wsrep_flow_control_paused_ns), the pause requests the node across the wire
	// sent and the writing node received.
	FlowControlPaused float64 `json:"flow_control_paused,omitempty"`
	FlowControlSent   int64   `json:"flow_control_sent,omitempty"`
	FlowControlRecv   int64   `json:"flow_control_recv,omitempty"`
	ChecksumOK        bool    `json:"checksum_ok"` // caught up after the point and every table matched
}

// SetCommit copies the point's latency percentiles into its commit figures.
func (s *SyncStats) SetCommit(p Point) {
	s.CommitP50Ms, s.CommitP95Ms, s.CommitP99Ms = p.LatP50Ms, p.LatP95Ms, p.LatP99Ms
}

// CommitFit is one mode's commit time as a line of the round trip: each commit pays
// RTTs round trips plus ConstMs, fitted on the 1-thread median commit latency over the
// RTTs measured (the fewest threads measured when 1 was not).
type CommitFit struct {
	Mode    string
	Threads int
	RTTs    float64 // round trips per commit (the slope)
	ConstMs float64 // ms a commit takes besides them (the intercept)
	R2      float64
	Points  int
}

// At is the fit's commit latency at rttMs.
func (f CommitFit) At(rttMs float64) float64 { return f.RTTs*rttMs + f.ConstMs }

// syncUsable are the usable sync points of mode that did not fall back.
func syncUsable(pts []Point, mode string) []Point {
	var out []Point
	for _, p := range pts {
		if p.Sync != nil && p.Series == mode && p.Usable() && !p.Sync.FellBack && p.LatP50Ms > 0 {
			out = append(out, p)
		}
	}
	return out
}

// CommitFits fits every mode's commit line, in the modes' order of first appearance;
// a mode with fewer than two RTTs measured at its fewest threads has none. It is the one
// place the per-commit round trips are computed (the report's findings, the study's
// headlines and predict all read it).
func CommitFits(pts []Point) []CommitFit {
	var out []CommitFit
	for _, mode := range SyncModes(pts) {
		ps := syncUsable(pts, mode)
		if len(ps) == 0 {
			continue
		}
		least := slices.MinFunc(ps, func(a, b Point) int { return a.Threads - b.Threads }).Threads
		var xs, ys []float64
		for _, p := range ps {
			if p.Threads == least {
				xs, ys = append(xs, p.Sync.RTTMs), append(ys, p.LatP50Ms)
			}
		}
		if l, ok := stats.FitLine(xs, ys); ok {
			out = append(out, CommitFit{Mode: mode, Threads: least, RTTs: l.Slope, ConstMs: l.Intercept, R2: l.R2, Points: l.N})
		}
	}
	return out
}

// SyncModes are the modes of the sync points, in order of first appearance.
func SyncModes(pts []Point) []string {
	var out []string
	for _, p := range pts {
		if p.Sync != nil && !slices.Contains(out, p.Series) {
			out = append(out, p.Series)
		}
	}
	return out
}

// SyncMean is the mean of fig over mode's usable points at rttMs and threads that did
// not fall back; ok is false when none was measured. It is the one place a cell of the
// sync grid is averaged.
func SyncMean(pts []Point, mode string, rttMs float64, threads int, fig func(Point) float64) (float64, bool) {
	var xs []float64
	for _, p := range syncUsable(pts, mode) {
		if p.Threads == threads && math.Abs(p.Sync.RTTMs-rttMs) < 1e-9 {
			xs = append(xs, fig(p))
		}
	}
	return stats.Mean(xs), len(xs) > 0
}

// SyncTPS is SyncMean of TPS.
func SyncTPS(pts []Point, mode string, rttMs float64, threads int) (float64, bool) {
	return SyncMean(pts, mode, rttMs, threads, func(p Point) float64 { return p.TPS })
}

// Below is where a mode at some thread count first sustains less than a target TPS.
type Below struct {
	Mode    string
	Threads int
	RTTMs   float64 // the smallest RTT measured below the target
	Found   bool    // false: at or above the target at every RTT measured
	AtRTTMs float64 // the largest RTT measured (when !Found)
}

// BelowTarget is, per mode, the smallest RTT at which the mode's TPS at threads fell
// below target; a mode never measured at threads is left out.
func BelowTarget(pts []Point, threads int, target float64) []Below {
	var out []Below
	for _, mode := range SyncModes(pts) {
		var rtts []float64
		for _, p := range syncUsable(pts, mode) {
			if p.Threads == threads && !slices.Contains(rtts, p.Sync.RTTMs) {
				rtts = append(rtts, p.Sync.RTTMs)
			}
		}
		if len(rtts) == 0 {
			continue
		}
		slices.Sort(rtts)
		b := Below{Mode: mode, Threads: threads, AtRTTMs: rtts[len(rtts)-1]}
		for _, r := range rtts {
			if tps, _ := SyncTPS(pts, mode, r, threads); tps < target {
				b.RTTMs, b.Found = r, true
				break
			}
		}
		out = append(out, b)
	}
	return out
}
