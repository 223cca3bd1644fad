package cli

import (
	"fmt"
	"strconv"
	"time"

	"github.com/wirelab/wirelab/internal/report"
	"github.com/wirelab/wirelab/internal/result"
)

// commitPrediction is one mode's commit term carried to another round trip.
type commitPrediction struct {
	Mode        string  `json:"mode"`
	Threads     int     `json:"threads"`
	RTTsPerTxn  float64 `json:"rtts_per_commit"`
	ConstMs     float64 `json:"const_ms"`
	RTTMs       float64 `json:"rtt_ms"`
	CommitP50Ms float64 `json:"commit_p50_ms"`
}

// predictCommit is predict on sync-study runs: each mode's commit line (result.CommitFits:
// round trips per commit and a constant, fitted on the sweep's 1-thread medians) read at
// --rtt. done is false when a --from run is not a sync study: the MVA prediction applies.
func predictCommit(p *Process, o predictOptions) (done bool, err error) {
	var pts []result.Point
	for _, dir := range o.from {
		r, err := result.Read(dir)
		if err != nil {
			return true, fmt.Errorf("predict: %w", err)
		}
		if r.Study != "sync" {
			return false, nil
		}
		for _, pt := range r.Points {
			if o.series == nil || o.series[pt.Series] {
				pts = append(pts, pt)
			}
		}
	}
	if len(o.against) > 0 || o.crossover {
		return true, fmt.Errorf("predict: --from holds sync-study runs, whose commit term is read at --rtt; --against and --crossover model links and CPUs: drop them")
	}
	rtt := float64(o.links[0].RTT) / float64(time.Millisecond)
	fits := result.CommitFits(pts)
	if len(fits) == 0 {
		return true, fmt.Errorf("predict: no mode of %v was measured at two RTTs or more: nothing to fit a commit term to", o.from)
	}
	var out []commitPrediction
	for _, f := range fits {
		out = append(out, commitPrediction{Mode: f.Mode, Threads: f.Threads, RTTsPerTxn: f.RTTs, ConstMs: f.ConstMs, RTTMs: rtt, CommitP50Ms: f.At(rtt)})
	}
	if o.json {
		return true, writeJSON(p, out)
	}
	t := report.Table{Caption: fmt.Sprintf("Median commit latency at %s ms RTT, from each mode's commit term", strconv.FormatFloat(rtt, 'f', -1, 64)),
		Header: []string{"mode", "threads", "RTTs per commit", "+ ms", "predicted commit p50 ms", "measured"}, Numeric: []bool{false, true, true, true, true, true}}
	for i, c := range out {
		measured := "–"
		if v, ok := result.SyncMean(pts, c.Mode, rtt, c.Threads, func(p result.Point) float64 { return p.Sync.CommitP50Ms }); ok {
			measured = report.Num(v)
		}
		t.Rows = append(t.Rows, []string{c.Mode, strconv.Itoa(fits[i].Threads), fmt.Sprintf("%.2f", c.RTTsPerTxn), report.Num(c.ConstMs), report.Num(c.CommitP50Ms), measured})
	}
	fmt.Fprint(p.Stdout, report.Markdown([]report.Block{t}))
	return true, nil
}
