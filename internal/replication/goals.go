package replication

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"time"

	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/stats"
	"github.com/wirelab/wirelab/internal/tunnel"
)

// GoalsFile is the file beside results.json that holds the study's goal verdicts
// (tunnel.GoalsFile): `make bench-tunnel` merges it into its goals table.
const GoalsFile = "goals.json"

// Goals judges the tunnel's replication goals on the study's points, each by the rule every
// goal is judged with (tunnel.Goal.Judge: its 95% interval against the target). A goal the
// points cannot speak to (no max-load search of both channels, no bandwidth point) is left
// out.
func Goals(pts []result.Point) []tunnel.Judgement {
	edges := map[string]result.Edge{}
	for _, e := range result.MaxLoads(pts) {
		if e.Limit > 0 && e.At != nil {
			edges[e.Channel] = e
		}
	}
	tun, hasTun := edges[string(Tunnel)]
	nat, hasNat := edges[string(Native)]
	var out []tunnel.Judgement
	if hasTun && hasNat {
		out = append(out, judge("replication-load", loadCase(tun, nat)))
	}
	var wire []tunnel.Case
	// The goal judges the ratio's interval against its target; the margin's verdict is
	// not read, so the default serves.
	for _, w := range result.WireVsNative(pts, stats.DefaultMargin) {
		if w.Channel == string(Tunnel) {
			wire = append(wire, wireCase(w))
		}
	}
	if len(wire) > 0 {
		out = append(out, judge("replication-wire", wire...))
	}
	if hasTun {
		out = append(out, judge("replication-p99-lag", lagCase(tun, pts)))
	}
	return out
}

func judge(key string, cases ...tunnel.Case) tunnel.Judgement {
	g, ok := tunnel.GoalByKey(key)
	if !ok {
		panic("replication: no tunnel goal " + key) // the keys above are tunnel.Goals'
	}
	return g.Judge(cases)
}

// linkText is the wire a point ran on: "2 Mbit/s, RTT 250 ms", "no rate cap, RTT 250 ms".
func linkText(p result.Point) string {
	rate := "no rate cap"
	if p.LinkRateBps > 0 {
		rate = fmt.Sprintf("%g Mbit/s", float64(p.LinkRateBps)/1e6)
	}
	return fmt.Sprintf("%s, RTT %g ms", rate, p.Replication.RTTMs)
}

// loadCase is the tunnel's maximum sustainable load over native's, in the range the two
// searches allow (result.Edge.Over).
func loadCase(tun, nat result.Edge) tunnel.Case {
	r := tun.Over(nat)
	c := tunnel.Case{Name: linkText(*tun.At), Figure: r.Ratio, Lo: r.Lo, Hi: r.Hi, Bounded: r.Known, N: tun.Probes + nat.Probes}
	probes := fmt.Sprintf("%d tunnel and %d native probes", tun.Probes, nat.Probes)
	switch {
	case tun.Est > 0 && nat.Est > 0:
		c.Basis = "the limits fitted to " + probes + ", their 95% intervals joined on the log scale"
	case r.Known:
		c.Basis = "the range the searches' brackets allow (not a 95% interval), " + probes
	default:
		c.Basis = "a search did not bracket its limit, " + probes
	}
	if math.IsNaN(c.Figure) {
		c.Figure, c.Bounded = 0, false
	}
	return c
}

// wireCase is the tunnel's wire bytes per query over native's at one load, by batch means
// of the per-second series.
func wireCase(w result.WireRatio) tunnel.Case {
	c := w.Ratio
	return tunnel.Case{Name: fmt.Sprintf("%.0f QPS", w.Load), Figure: c.Ratio, Lo: c.Lo, Hi: c.Hi, Bounded: c.Bounded,
		N: min(c.A.N, c.B.N), Basis: "batch means of the bytes per query, " + c.SamplesText()}
}

// lagCase is the tunnel's p99 lag over the RTT at its highest sustained load: the mean of
// the probes that passed there, with the t interval of that mean over those probes (each
// probe is a run of its own; the seconds of one run are not independent). Fewer than
// stats.MinSamples such probes give no interval.
func lagCase(tun result.Edge, pts []result.Point) tunnel.Case {
	var over []float64
	for _, p := range pts {
		if p.Series == MaxLoad && p.Channel == string(Tunnel) && p.Replication != nil &&
			p.Replication.TargetQPS == tun.Limit && p.SustainsLoad() {
			over = append(over, p.Replication.LagP99S-p.Replication.RTTMs/1000)
		}
	}
	e := stats.MeanOf(over)
	c := tunnel.Case{Name: fmt.Sprintf("%.0f QPS (the highest sustained), %s", tun.Limit, linkText(*tun.At)), Figure: e.Mean, N: e.N}
	if e.N >= stats.MinSamples && e.Known() {
		c.Lo, c.Hi, c.Bounded = e.Mean-e.Half95(), e.Mean+e.Half95(), true
		c.Basis = fmt.Sprintf("%d probes there: t interval of their mean p99", e.N)
	} else {
		c.Basis = fmt.Sprintf("%s there (an interval needs %d)", plural(e.N, "probe"), stats.MinSamples)
	}
	return c
}

func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}

// WriteGoals writes the study's goal verdicts to dir/goals.json, with the command that ran
// it and the run's start and end. Nothing is written when no goal could be judged.
func WriteGoals(dir, command string, run *result.Run) error {
	js := Goals(run.Points)
	if len(js) == 0 {
		return nil
	}
	date := spanText(run.Started, run.Finished)
	for i := range js {
		js[i].Command, js[i].Date = command, date
	}
	return tunnel.WriteGoals(filepath.Join(dir, GoalsFile), tunnel.GoalsFile{Goals: js})
}

// WriteGoals writes the study's goal verdicts beside results.json (the CLI calls it once
// the run is written).
func (r *Study) WriteGoals(dir, command string, run *result.Run) error {
	return WriteGoals(dir, command, run)
}

// spanText is "2026-12-01 22:47 to 23:01 UTC", the end's date written only when it
// differs, as the bench pages write theirs.
func spanText(from, to time.Time) string {
	a, b := from.UTC().Format("2006-01-02 15:04"), to.UTC().Format("2006-01-02 15:04")
	if d, rest, _ := strings.Cut(b, " "); strings.HasPrefix(a, d+" ") {
		b = rest
	}
	return a + " to " + b + " UTC"
}
