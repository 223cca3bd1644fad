package result

import (
	"slices"

	"github.com/wirelab/wirelab/internal/stats"
)

// SyncModel is one mode's throughput as a function of threads and round trip, from a
// sync sweep. Two bounds, the lower of which holds:
//
//   - the closed loop: each of N threads waits for its own commit, so TPS ≤ N ÷ the
//     commit latency at the RTT (Commit, the 1-thread line);
//   - the ceiling: what the mode sustains however many threads wait, as time per commit
//     CeilMs + RTT ÷ Window. CeilMs is the primary's own work per commit (CPU, flush),
//     which no round trip touches; Window is the commits that share one round trip, a
//     group commit or a send window (semi-sync's AFTER_SYNC, Galera's send windows). The
//     line is fitted (stats.FitLine) on 1 ÷ the highest TPS measured at each RTT, leaving
//     out the RTTs where that point's threads were all busy waiting for their commits
//     (TPS × commit ≥ 0.9 × threads): there the closed loop held, and the ceiling is only
//     known to lie higher. One line holds both what the machine allows at RTT 0 and the
//     window's share of each round trip, so one fit on the sweep's own points gives both.
//
// A mode whose commit pays under half a round trip (an asynchronous control) has no
// window: its ceiling is a constant, the mean time per commit of its ceiling points. So
// has a mode where one RTT or none showed a ceiling, or where the line did not rise with
// the round trip. What the sweep's thread counts cannot tell is whether a window grows
// with the threads (semi-sync's AFTER_SYNC at 8 threads pays about two round trips per
// commit, which may be a window of N/2 rather than a fixed one): a prediction beyond the
// threads or RTTs measured says so (Extrapolates).
type SyncModel struct {
	Commit CommitFit
	// CeilMs and Window: the ceiling's time per commit, CeilMs + RTT ÷ Window ms; Window
	// 0 = none (the ceiling does not depend on the round trip). CeilRTTs are the RTTs the
	// ceiling was read at; none = no ceiling was seen (the closed loop held everywhere).
	CeilMs   float64
	Window   float64
	CeilRTTs []float64
	// RTTs and Threads are what the sweep measured of the mode, ascending.
	RTTs    []float64
	Threads []int
}

// Bounds a SyncModel's TPS can come from.
const (
	BoundClosedLoop = "closed-loop" // N threads ÷ the commit latency
	BoundCeiling    = "ceiling"     // the mode's ceiling at the RTT
)

// closedLoopShare: a point whose TPS × commit latency reaches this share of its threads
// had every thread waiting for its own commit.
const closedLoopShare = 0.9

// SyncModels is every mode's model, in the order of CommitFits (a mode without a commit
// line has none).
func SyncModels(pts []Point) []SyncModel {
	var out []SyncModel
	for _, f := range CommitFits(pts) {
		m := SyncModel{Commit: f}
		var samples []float64 // ms per commit at the ceiling, per CeilRTTs
		for _, p := range syncUsable(pts, f.Mode) {
			if !slices.Contains(m.RTTs, p.Sync.RTTMs) {
				m.RTTs = append(m.RTTs, p.Sync.RTTMs)
			}
			if !slices.Contains(m.Threads, p.Threads) {
				m.Threads = append(m.Threads, p.Threads)
			}
		}
		slices.Sort(m.RTTs)
		slices.Sort(m.Threads)
		for _, r := range m.RTTs {
			tps, threads := maxTPS(pts, f.Mode, r, m.Threads)
			if tps <= 0 || tps*f.At(r)/1000 >= closedLoopShare*float64(threads) {
				continue
			}
			m.CeilRTTs, samples = append(m.CeilRTTs, r), append(samples, 1000/tps)
		}
		m.CeilMs = stats.Mean(samples)
		if l, ok := stats.FitLine(m.CeilRTTs, samples); ok && f.RTTs >= 0.5 && l.Slope > 0 {
			m.CeilMs, m.Window = l.Intercept, 1/l.Slope
		}
		out = append(out, m)
	}
	return out
}

// maxTPS is the highest mean TPS of mode at rttMs over the thread counts, and its threads.
func maxTPS(pts []Point, mode string, rttMs float64, threads []int) (tps float64, at int) {
	for _, th := range threads {
		if v, ok := SyncTPS(pts, mode, rttMs, th); ok && v > tps {
			tps, at = v, th
		}
	}
	return tps, at
}

// Ceiling is the mode's ceiling at rttMs in TPS; ok is false when the sweep showed none,
// or the fitted line gives no positive time per commit there.
func (m SyncModel) Ceiling(rttMs float64) (tps float64, ok bool) {
	if len(m.CeilRTTs) == 0 {
		return 0, false
	}
	ms := m.CeilMs
	if m.Window > 0 {
		ms += rttMs / m.Window
	}
	if ms <= 0 {
		return 0, false
	}
	return 1000 / ms, true
}

// TPS is the mode's throughput at threads and rttMs: the lower of the closed loop and the
// ceiling, and which of them it is. 0 when the commit line gives no positive latency.
func (m SyncModel) TPS(threads int, rttMs float64) (float64, string) {
	commit := m.Commit.At(rttMs)
	if commit <= 0 {
		return 0, ""
	}
	tps, bound := float64(threads)*1000/commit, BoundClosedLoop
	if c, ok := m.Ceiling(rttMs); ok && c < tps {
		tps, bound = c, BoundCeiling
	}
	return tps, bound
}

// Extrapolates says whether threads or rttMs lie outside what the sweep measured of the
// mode: the commit line and the ceiling are then carried beyond their data.
func (m SyncModel) Extrapolates(threads int, rttMs float64) (byThreads, byRTT bool) {
	if len(m.Threads) > 0 {
		byThreads = threads < m.Threads[0] || threads > m.Threads[len(m.Threads)-1]
	}
	if len(m.RTTs) > 0 {
		const eps = 1e-9
		byRTT = rttMs < m.RTTs[0]-eps || rttMs > m.RTTs[len(m.RTTs)-1]+eps
	}
	return byThreads, byRTT
}
