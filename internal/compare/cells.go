package compare

import (
	"fmt"
	"math"
	"strings"

	"github.com/wirelab/wirelab/internal/report"
)

// legend explains the table's cells; every format prints it above the table.
func (c *Comparison) legend() string {
	return fmt.Sprintf("TPS per point: the median of its samples (s = per-second TPS after warm-up, "+
		"r = repeats) ± its 95%% interval where there are 6 or more. The change is against %s, with "+
		"its 95%% interval and the Mann-Whitney U p-value; it is called when p < %g, each side has "+
		"at least %d samples and it exceeds ±%g%%, else \"~\" (no change called).",
		c.Runs[0].Name, c.Alpha, c.MinSamples, c.Margin*100)
}

// runLines name each run: study, start and the series its matched points come from.
func (c *Comparison) runLines() []string {
	var out []string
	for i, r := range c.Runs {
		var series []string
		seen := map[string]bool{}
		for _, row := range c.Rows {
			if s := row.Sides[i].Series; !seen[s] {
				seen[s] = true
				series = append(series, s)
			}
		}
		out = append(out, fmt.Sprintf("%s: %s study, started %s, series %s", r.Name, r.Study,
			r.Started.UTC().Format("2006-01-02 15:04:05"), strings.Join(series, ", ")))
	}
	return out
}

// header is the table's header: the point, each run's median, each change.
func (c *Comparison) header() []string {
	h := []string{"point", c.Runs[0].Name}
	for _, r := range c.Runs[1:] {
		h = append(h, r.Name, "vs "+c.Runs[0].Name)
	}
	return h
}

// cells are the table's rows, the geomean last.
func (c *Comparison) cells() [][]string {
	var rows [][]string
	withWorkload := c.workloads() > 1
	for _, r := range c.Rows {
		label := r.Key.String()
		if withWorkload {
			label = r.Key.Workload + ", " + label
		}
		row := []string{label, sideText(r.Sides[0])}
		for i, ch := range r.Changes {
			row = append(row, sideText(r.Sides[i+1]), changeText(ch, r.Sides[0].Samples, r.Sides[i+1].Samples))
		}
		rows = append(rows, row)
	}
	g := []string{"geomean", "–"}
	if g0 := c.Geomean.Medians; c.Geomean.Rows > 0 {
		g[1] = report.Num(g0[0])
	}
	for i := range c.Runs[1:] {
		if c.Geomean.Rows == 0 {
			g = append(g, "–", "–")
			continue
		}
		g = append(g, report.Num(c.Geomean.Medians[i+1]), signedPct(c.Geomean.Ratios[i]))
	}
	return append(rows, g)
}

func (c *Comparison) workloads() int {
	seen := map[string]bool{}
	for _, r := range c.Rows {
		seen[r.Key.Workload] = true
	}
	return len(seen)
}

// sideText is "59.4 ±1%", "59.4" without an interval, "FAILED" when every repeat failed.
func sideText(s Side) string {
	if len(s.Samples.Values) == 0 {
		if s.Samples.Failed > 0 {
			return "FAILED"
		}
		return "–"
	}
	t := report.Num(s.Median)
	if ci := s.MedianCI; ci != nil && s.Median > 0 {
		t += fmt.Sprintf(" ±%.0f%%", 100*math.Max(s.Median-ci.Lo, ci.Hi-s.Median)/s.Median)
	}
	return t
}

// changeText is "+81.8% [+80.2% … +83.4%] (p=0.008 n=5s+5s)" when called, "~" with the
// figures otherwise.
func changeText(ch Change, a, b Samples) string {
	n := "n=" + sampleCount(a) + "+" + sampleCount(b)
	if ch.Ratio == 0 {
		return "– (" + n + ")"
	}
	est := signedPct(ch.Ratio)
	if ch.RatioCI != nil {
		est += " [" + signedPct(ch.RatioCI.Lo) + " … " + signedPct(ch.RatioCI.Hi) + "]"
	}
	switch {
	case ch.Significant:
		return fmt.Sprintf("%s (p=%.3f %s)", est, ch.P, n)
	case ch.P == 0: // not tested: too few samples
		return fmt.Sprintf("~ %s (%s, need %d a side)", signedPct(ch.Ratio), n, MinSamples)
	case ch.P < Alpha:
		return fmt.Sprintf("~ %s (p=%.3f %s, within ±%s)", est, ch.P, n, marginText(ch))
	}
	return fmt.Sprintf("~ %s (p=%.3f %s)", est, ch.P, n)
}

// marginText is the margin as the change's reason states it.
func marginText(ch Change) string {
	_, after, ok := strings.Cut(ch.Reason, "±")
	if !ok {
		return "the margin"
	}
	return strings.TrimSuffix(after, " margin")
}

// sampleCount is "5s", "3r" or "1".
func sampleCount(s Samples) string {
	n := fmt.Sprint(len(s.Values))
	switch s.Kind {
	case FromSeconds:
		return n + "s"
	case FromRepeats:
		return n + "r"
	}
	return n
}

// signedPct is a ratio as a signed percentage change: 1.818 → "+81.8%".
func signedPct(r float64) string {
	return fmt.Sprintf("%+.1f%%", (r-1)*100)
}
