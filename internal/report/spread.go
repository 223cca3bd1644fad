package report

import (
	"fmt"
	"math"
	"strconv"

	"github.com/wirelab/wirelab/internal/stats"
)

// How the report reads and prints a ratio's spread. Every ratio comes from tpsRatio (two
// cells' tpsEstimate through stats.Ratio95); this file says what it means and how it is
// written.

// noEffectTolerance is how close to 1 a ratio with no known spread must be to count as no
// difference.
const noEffectTolerance = 0.02

// effect is what a variant does to throughput at one thread count.
type effect int

const (
	noDifference effect = iota
	better
	worse
)

// effectOf reads a variant ÷ plain ratio: better or worse when its 95% interval lies wholly
// above or below 1, no measurable difference when it includes 1. With no spread known (one
// run without per-second series) the ratio itself decides, within noEffectTolerance of 1
// counting as no difference.
func effectOf(r stats.RatioCI) effect {
	lo, hi := r.Lo, r.Hi
	if !r.Known {
		lo, hi = r.Ratio-noEffectTolerance, r.Ratio+noEffectTolerance
	}
	switch {
	case lo > 1:
		return better
	case hi < 1:
		return worse
	}
	return noDifference
}

// ciText is a ratio's 95% confidence interval as findings and tables quote it: "CI
// 1.12–1.14", "CI unbounded" when it does not close, "no CI" when the spread is unknown
// (one run with no per-second series).
func ciText(r stats.RatioCI) string { return interval(r, 1, 2, "") }

// shareCIText is ciText for a ratio shown as a share: "CI 76.9–78.5%".
func shareCIText(r stats.RatioCI) string { return interval(r, 100, 1, "%") }

// interval formats Lo and Hi scaled by scale with at least decimals digits, adding digits
// (up to two) until the bounds differ, so a tight interval does not read "0.61–0.61".
func interval(r stats.RatioCI, scale float64, decimals int, unit string) string {
	switch {
	case !r.Known:
		return "no CI"
	case math.IsInf(r.Lo, 0) || math.IsInf(r.Hi, 0):
		return "CI unbounded"
	}
	lo, hi := r.Lo*scale, r.Hi*scale
	d := decimals
	for d < decimals+2 && strconv.FormatFloat(lo, 'f', d, 64) == strconv.FormatFloat(hi, 'f', d, 64) {
		d++
	}
	return "CI " + strconv.FormatFloat(lo, 'f', d, 64) + "–" + strconv.FormatFloat(hi, 'f', d, 64) + unit
}

// ratioWithCI is a ratio as a finding's citation quotes it: "1.13×, CI 1.12–1.14".
func ratioWithCI(r stats.RatioCI) string {
	return fmt.Sprintf("%.2f×, %s", r.Ratio, ciText(r))
}

// ratioCell is a ratio for a table cell: "1.13× (CI 1.12–1.14)".
func ratioCell(r stats.RatioCI) string {
	return fmt.Sprintf("%.2f× (%s)", r.Ratio, ciText(r))
}

// shareCell is a ratio as a share for a table cell: "77.7% (CI 76.9–78.5%)".
func shareCell(r stats.RatioCI) string {
	return fmt.Sprintf("%.1f%% (%s)", 100*r.Ratio, shareCIText(r))
}

// spreadNote says where the intervals of a study's ratios come from and how to read them.
func spreadNote(repeat int) string {
	from := "from each point's per-second TPS after warm-up (batch means of about 10 batches)"
	if repeat > 1 {
		from = fmt.Sprintf("from the %d repeats (Student's t)", repeat)
	}
	return "Every ratio comes with its 95% confidence interval (CI, Fieller's method for a ratio of two means), " +
		from + "; where the interval includes 1.00× (100%) the finding says no measurable difference."
}
