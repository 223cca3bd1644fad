package predict

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/wirelab/wirelab/internal/flagx"
	"github.com/wirelab/wirelab/internal/report"
	"github.com/wirelab/wirelab/internal/result"
)

// commitPrediction is one mode's commit term and window limit carried to another round
// trip and to --threads.
type commitPrediction struct {
	Mode        string  `json:"mode"`
	Threads     int     `json:"threads"` // the commit line's thread count (1 where measured)
	RTTsPerTxn  float64 `json:"rtts_per_commit"`
	ConstMs     float64 `json:"const_ms"`
	RTTMs       float64 `json:"rtt_ms"`
	CommitP50Ms float64 `json:"commit_p50_ms"`
	// WindowCommitsPerRTT is the window: commits that share one round trip (0 = none);
	// CeilingConstMs the ceiling's time per commit besides it, CeilingTPS the ceiling at
	// RTTMs (0 = none seen).
	WindowCommitsPerRTT float64 `json:"window_commits_per_rtt,omitempty"`
	CeilingConstMs      float64 `json:"ceiling_const_ms,omitempty"`
	CeilingTPS          float64 `json:"ceiling_tps,omitempty"`
	// TPS is the throughput at each --threads.
	TPS             []tpsPrediction `json:"tps"`
	MeasuredRTTsMs  []float64       `json:"measured_rtts_ms"`
	MeasuredThreads []int           `json:"measured_threads"`
	RTTExtrapolated bool            `json:"rtt_extrapolated,omitempty"`
}

// tpsPrediction is one mode's TPS at one thread count: the bound that holds
// (result.BoundClosedLoop or BoundCeiling), whether the threads or the RTT lie beyond
// what was measured, and the run's own figure when it measured that cell.
type tpsPrediction struct {
	Threads      int     `json:"threads"`
	TPS          float64 `json:"tps"`
	Bound        string  `json:"bound"`
	Extrapolated bool    `json:"extrapolated,omitempty"`
	MeasuredTPS  float64 `json:"measured_tps,omitempty"`
}

// commitTerm is predict on sync-study runs: each mode's model (result.SyncModels: the
// commit line, round trips per commit and a constant fitted on the sweep's 1-thread
// medians, and the window limit) read at --rtt and --threads. done is false when a --from
// run is not a sync study: the MVA prediction applies.
func commitTerm(w io.Writer, o Options) (done bool, err error) {
	var pts []result.Point
	for _, dir := range o.From {
		r, err := result.Read(dir)
		if err != nil {
			return true, fmt.Errorf("predict: %w", err)
		}
		if r.Study != "sync" {
			return false, nil
		}
		for _, pt := range r.Points {
			if o.Series == nil || o.Series[pt.Series] {
				pts = append(pts, pt)
			}
		}
	}
	if len(o.Against) > 0 || o.Crossover {
		return true, fmt.Errorf("predict: --from holds sync-study runs, whose commit term is read at --rtt; --against and --crossover model links and CPUs: drop them")
	}
	rtt := rttMs(o.Links[0].RTT)
	models := result.SyncModels(pts)
	if len(models) == 0 {
		return true, fmt.Errorf("predict: no mode of %v was measured at two RTTs or more: nothing to fit a commit term to", o.From)
	}
	out := make([]commitPrediction, len(models))
	for i, m := range models {
		out[i] = syncPrediction(pts, m, rtt, o.Threads)
	}
	if o.JSON {
		return true, writeJSON(w, out)
	}
	fmt.Fprintf(w, "Predicted from %s by each mode's commit term and window limit.\n\n%s", strings.Join(o.From, ", "),
		report.Markdown(commitBlocks(pts, models, out, rtt, o.Threads)))
	return true, nil
}

// syncPrediction is m read at rtt and every thread count.
func syncPrediction(pts []result.Point, m result.SyncModel, rtt float64, threads []int) commitPrediction {
	f := m.Commit
	c := commitPrediction{Mode: f.Mode, Threads: f.Threads, RTTsPerTxn: f.RTTs, ConstMs: f.ConstMs, RTTMs: rtt,
		CommitP50Ms: f.At(rtt), WindowCommitsPerRTT: m.Window, MeasuredRTTsMs: m.RTTs, MeasuredThreads: m.Threads}
	if ceil, ok := m.Ceiling(rtt); ok {
		c.CeilingConstMs, c.CeilingTPS = m.CeilMs, ceil
	}
	_, c.RTTExtrapolated = m.Extrapolates(f.Threads, rtt)
	for _, n := range threads {
		tps, bound := m.TPS(n, rtt)
		byThreads, byRTT := m.Extrapolates(n, rtt)
		t := tpsPrediction{Threads: n, TPS: tps, Bound: bound, Extrapolated: byThreads || byRTT}
		t.MeasuredTPS, _ = result.SyncTPS(pts, f.Mode, rtt, n)
		c.TPS = append(c.TPS, t)
	}
	return c
}

// commitBlocks are predict's tables on a sync run: the commit term at the RTT, then TPS
// by threads with the bound that holds, and what the model is.
func commitBlocks(pts []result.Point, models []result.SyncModel, out []commitPrediction, rtt float64, threads []int) []report.Block {
	at := strconv.FormatFloat(rtt, 'f', -1, 64)
	commit := report.Table{Caption: fmt.Sprintf("Median commit latency at %s ms RTT, from each mode's commit term", at),
		Header: []string{"mode", "threads", "RTTs per commit", "+ ms", "predicted commit p50 ms", "measured"}, Numeric: []bool{false, true, true, true, true, true}}
	header := []string{"mode", "window", "ceiling TPS"}
	for _, n := range threads {
		header = append(header, threadsN(n))
	}
	tps := report.Table{Caption: fmt.Sprintf("TPS at %s ms RTT: the lower of the closed loop (threads ÷ commit) and the mode's ceiling", at),
		Header: header, Numeric: append([]bool{false, false, true}, make([]bool, len(threads))...)}
	extrapolated := false
	var allThreads []int
	var allRTTs []float64
	for i, c := range out {
		allThreads, allRTTs = union(allThreads, c.MeasuredThreads), union(allRTTs, c.MeasuredRTTsMs)
		measured := "–"
		if v, ok := result.SyncMean(pts, c.Mode, rtt, c.Threads, func(p result.Point) float64 { return p.Sync.CommitP50Ms }); ok {
			measured = report.Num(v)
		}
		commit.Rows = append(commit.Rows, []string{c.Mode, strconv.Itoa(c.Threads), fmt.Sprintf("%.2f", c.RTTsPerTxn), report.Num(c.ConstMs),
			report.Num(c.CommitP50Ms) + mark(c.RTTExtrapolated), measured})
		ceiling := "–"
		if c.CeilingTPS > 0 {
			ceiling = report.Num(c.CeilingTPS)
		}
		row := []string{c.Mode, windowText(models[i]), ceiling}
		for _, t := range c.TPS {
			cell := fmt.Sprintf("%s %s%s", report.Num(t.TPS), t.Bound, mark(t.Extrapolated))
			if t.MeasuredTPS > 0 {
				cell += ", measured " + report.Num(t.MeasuredTPS)
			}
			row = append(row, cell)
			extrapolated = extrapolated || t.Extrapolated
		}
		tps.Rows = append(tps.Rows, row)
		extrapolated = extrapolated || c.RTTExtrapolated
	}
	blocks := []report.Block{commit, tps, report.Paragraph{Text: modelText}}
	if extrapolated {
		blocks = append(blocks, report.Paragraph{Text: fmt.Sprintf("* beyond what the sweep measured (threads %s, RTTs %s ms): the commit line and the ceiling are carried past their data, "+
			"and whether a window grows with the threads the thread counts measured cannot tell.", flagx.JoinInts(allThreads), joinRTTs(allRTTs))})
	}
	return blocks
}

// modelText says what the TPS table's bounds are.
const modelText = "Each thread waits for its own commit, so N threads sustain at most N ÷ the commit latency (closed-loop). " +
	"A mode's ceiling is what it sustains however many threads wait: per commit, a constant (the primary's own work) plus the round trip ÷ the window, " +
	"the commits that share one round trip (a group commit, a send window), fitted on the highest TPS measured at each RTT where the threads were not all waiting for their commits. " +
	"A mode whose commit pays no round trip has no window: its ceiling is the machine's, the same at every RTT."

// windowText is a model's window, or why it has none.
func windowText(m result.SyncModel) string {
	switch {
	case m.Window > 0:
		return strconv.FormatFloat(m.Window, 'g', 3, 64) + " commits per round trip"
	case m.Commit.RTTs < 0.5:
		return "none: its commit pays no round trip"
	case len(m.CeilRTTs) == 0:
		return "none seen: every thread's commit went through at every RTT"
	case len(m.CeilRTTs) == 1:
		return fmt.Sprintf("none seen: a ceiling at %s ms only", strconv.FormatFloat(m.CeilRTTs[0], 'f', -1, 64))
	}
	return "none: the ceiling did not fall as the round trip grew"
}

// union is a with the values of b it lacks, ascending.
func union[T int | float64](a, b []T) []T {
	for _, v := range b {
		if !slices.Contains(a, v) {
			a = append(a, v)
		}
	}
	slices.Sort(a)
	return a
}

func mark(extrapolated bool) string {
	if extrapolated {
		return " *"
	}
	return ""
}

func joinRTTs(v []float64) string {
	s := make([]string, len(v))
	for i, r := range v {
		s[i] = strconv.FormatFloat(r, 'f', -1, 64)
	}
	return strings.Join(s, ",")
}
