package compare

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/wirelab/wirelab/internal/report"
)

// legend says what the tables' units, estimate and test are; every format prints it
// under the tables.
func (c *Comparison) legend() string {
	from := ""
	if c.MarginFrom != "" {
		from = " (" + c.MarginFrom + ")"
	}
	return fmt.Sprintf("Units: a point run with --repeat N counts as N repeats; a point run once counts as "+
		"the batch means of its measured seconds (about 10 batches of 2 s or more: the batches of the report's "+
		"intervals), never as seconds, which are correlated; a point without a per-second series is 1 run. "+
		"Both sides of a row count the same unit (repeats against batches is refused). "+
		"Each run: the median of its units ± the median's 95%% interval (6 units or more). "+
		"The change against %s: the Hodges-Lehmann estimate (the median of every ratio of one of that run's "+
		"units to one of %s's) with its 95%% interval, and the two-sided Mann-Whitney U p-value of the same "+
		"units. It is called better or worse when each side has %d units or more, p < %g, the interval leaves "+
		"out no change and the estimate is beyond ±%s%s; else \"~\". More TPS is better, less latency is better. "+
		"A repeat's latency is its percentile over all its transactions; a batch's, the mean of the driver's "+
		"per-second p95 (p50 and p99 need repeats).",
		c.Runs[0].Name, c.Runs[0].Name, c.MinSamples, c.Alpha, pctText(c.Margin), from)
}

// pctText is a fraction as a percentage without trailing zeros: 0.05 → "5%".
func pctText(f float64) string {
	return strconv.FormatFloat(math.Round(f*1e6)/1e4, 'f', -1, 64) + "%"
}

// runLines name each run: study, start, the series its matched points come from and the
// units they are counted in.
func (c *Comparison) runLines() []string {
	var out []string
	for i, r := range c.Runs {
		var series, units []string
		seen := map[string]bool{}
		for _, row := range c.Tables[0].Rows {
			if s := "s" + row.Sides[i].Series; !seen[s] {
				seen[s] = true
				series = append(series, row.Sides[i].Series)
			}
			if u := "u" + row.Sides[i].Unit.String(); !seen[u] {
				seen[u] = true
				units = append(units, row.Sides[i].Unit.String())
			}
		}
		out = append(out, fmt.Sprintf("%s: %s study, started %s, series %s; a point counts as %s", r.Name, r.Study,
			r.Started.UTC().Format("2006-01-02 15:04:05"), strings.Join(series, ", "), strings.Join(units, " or ")))
	}
	return out
}

// header is a table's header: the point, each run's median, each change.
func (c *Comparison) header() []string {
	h := []string{"point", c.Runs[0].Name}
	for _, r := range c.Runs[1:] {
		h = append(h, r.Name, "vs "+c.Runs[0].Name)
	}
	return h
}

// cells are t's rows, the geomean last.
func (c *Comparison) cells(t Table) [][]string {
	var rows [][]string
	withWorkload := t.workloads() > 1
	for _, r := range t.Rows {
		label := r.Key.String()
		if withWorkload {
			label = r.Key.Workload + ", " + label
		}
		row := []string{label, sideText(r.Sides[0])}
		for i, ch := range r.Changes {
			row = append(row, sideText(r.Sides[i+1]), c.changeText(ch, r.Sides[0], r.Sides[i+1], i+1))
		}
		rows = append(rows, row)
	}
	g := []string{fmt.Sprintf("geomean (%d %s)", t.Geomean.Rows, plural(t.Geomean.Rows, "point", "points")), "–"}
	if t.Geomean.Rows > 0 {
		g[1] = report.Num(t.Geomean.Medians[0])
	}
	for i := range c.Runs[1:] {
		if t.Geomean.Rows == 0 {
			g = append(g, "–", "–")
			continue
		}
		g = append(g, report.Num(t.Geomean.Medians[i+1]), signedPct(t.Geomean.Ratios[i]))
	}
	return append(rows, g)
}

func (t Table) workloads() int {
	seen := map[string]bool{}
	for _, r := range t.Rows {
		seen[r.Key.Workload] = true
	}
	return len(seen)
}

// sideText is "59.4 ±1%", "59.4" without an interval, "FAILED" when every repeat failed.
func sideText(s Side) string {
	if len(s.Values) == 0 {
		if s.Unit.Points > 0 && s.Unit.Failed == s.Unit.Points {
			return "FAILED"
		}
		return "–"
	}
	t := report.Num(s.Median)
	if ci := s.MedianCI; ci != nil && s.Median > 0 {
		pct := 100 * math.Max(s.Median-ci.Lo, ci.Hi-s.Median) / s.Median
		if pct < 1 { // a tight interval is not "±0%"
			t += fmt.Sprintf(" ±%.1f%%", pct)
		} else {
			t += fmt.Sprintf(" ±%.0f%%", pct)
		}
	}
	return t
}

// changeText is "worse -9.8% [-10.4% … -9.1%] (p<0.001, 10+10 batches of 6 s)" when
// called, "~" with the figures and the reason otherwise, "–" with why when a side has no
// values.
// b is run `run`'s side.
func (c *Comparison) changeText(ch Change, a, b Side, run int) string {
	n := unitsText(a.Unit, b.Unit)
	if ch.Ratio == 0 {
		return "– (" + missingText(a, b, c.Runs[0].Name, c.Runs[run].Name) + ")"
	}
	est := signedPct(ch.Ratio)
	if ch.RatioCI != nil {
		est += " [" + signedPct(ch.RatioCI.Lo) + " … " + signedPct(ch.RatioCI.Hi) + "]"
	}
	switch {
	case ch.Significant:
		return fmt.Sprintf("%s %s (%s, %s)", ch.Verdict, est, pText(ch.P), n)
	case !ch.Tested:
		return fmt.Sprintf("~ %s (%s: a test needs %d a side)", est, n, c.MinSamples)
	case ch.P < c.Alpha && math.Abs(ch.Ratio-1) <= c.Margin:
		return fmt.Sprintf("~ %s (%s, %s, within ±%s)", est, pText(ch.P), n, pctText(c.Margin))
	case ch.P < c.Alpha:
		return fmt.Sprintf("~ %s (%s, %s, the interval includes 0%%)", est, pText(ch.P), n)
	}
	return fmt.Sprintf("~ %s (%s, %s)", est, pText(ch.P), n)
}

// pText is a tested p-value: "p=0.011", "p<0.001" (an underflow to 0 included).
func pText(p float64) string {
	if p < 0.001 {
		return "p<0.001"
	}
	return fmt.Sprintf("p=%.3f", p)
}

// unitsText is the units of a change: "10+10 batches of 6 s", "5+5 repeats", "1 run a
// side", "10 batches of 6 s + 10 of 3 s".
func unitsText(a, b Unit) string {
	switch {
	case a.Kind == Batches && a.BatchS == b.BatchS:
		return fmt.Sprintf("%d+%d batches of %d s", a.N, b.N, a.BatchS)
	case a.Kind == Batches:
		return fmt.Sprintf("%d %s of %d s + %d of %d s", a.N, plural(a.N, "batch", "batches"), a.BatchS, b.N, b.BatchS)
	case a.Points == 1 && b.Points == 1:
		return "1 run a side"
	}
	return fmt.Sprintf("%d+%d repeats", a.N, b.N)
}

// missingText says why a change has no figure: once when both sides agree, else each
// side's reason after its run's name.
func missingText(a, b Side, na, nb string) string {
	if a.Missing == b.Missing {
		return a.Missing
	}
	var out []string
	for _, s := range []struct{ name, why string }{{na, a.Missing}, {nb, b.Missing}} {
		if s.why != "" {
			out = append(out, s.name+": "+s.why)
		}
	}
	return strings.Join(out, "; ")
}

// signedPct is a ratio as a signed percentage change: 1.818 → "+81.8%".
func signedPct(r float64) string {
	return fmt.Sprintf("%+.1f%%", (r-1)*100)
}
