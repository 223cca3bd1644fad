package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/wirelab/wirelab/internal/metrics"
	"github.com/wirelab/wirelab/internal/result"
)

// num formats a measured value with precision that suits its size: 18529, 326.1, 2.18.
func num(v float64) string {
	a := math.Abs(v)
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "–"
	case a >= 1000:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
}

// numLike formats v with the decimals num would give ref, so "2867 ± 15" and
// "326.1 ± 4.2" read as one figure.
func numLike(v, ref float64) string {
	a := math.Abs(ref)
	switch {
	case a >= 1000:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// span formats a range of ratios: "0.54× to 0.57×", or one figure when they agree.
func span(lo, hi float64) string {
	a, b := fmt.Sprintf("%.2f×", lo), fmt.Sprintf("%.2f×", hi)
	if a == b {
		return a
	}
	return a + " to " + b
}

// ciText is a ratio's 95% confidence interval as findings and tables quote it: "CI
// 1.12–1.14", "CI unbounded" when it does not close, "no CI" when the spread is unknown
// (one run with no per-second series).
func ciText(r metrics.RatioCI) string { return interval(r, 1, 2, "") }

// shareCIText is ciText for a ratio shown as a share: "CI 76.9–78.5%".
func shareCIText(r metrics.RatioCI) string { return interval(r, 100, 1, "%") }

// interval formats Lo and Hi scaled by scale with at least decimals digits, adding digits
// (up to two) until the bounds differ, so a tight interval does not read "0.61–0.61".
func interval(r metrics.RatioCI, scale float64, decimals int, unit string) string {
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
func ratioWithCI(r metrics.RatioCI) string {
	return fmt.Sprintf("%.2f×, %s", r.Ratio, ciText(r))
}

// ratioCell is a ratio for a table cell: "1.13× (CI 1.12–1.14)".
func ratioCell(r metrics.RatioCI) string {
	return fmt.Sprintf("%.2f× (%s)", r.Ratio, ciText(r))
}

// shareCell is a ratio as a share for a table cell: "77.7% (CI 76.9–78.5%)".
func shareCell(r metrics.RatioCI) string {
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

// ratio formats b ÷ a as "1.85×"; "–" when a is zero.
func ratio(b, a float64) string {
	if a == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f×", b/a)
}

// pct formats a fraction as a percentage: 0.973 → "97%", 0.095 → "9.5%".
func pct(f float64) string {
	v := f * 100
	if math.Abs(v) < 10 && v != 0 {
		return strconv.FormatFloat(v, 'f', 1, 64) + "%"
	}
	return strconv.FormatFloat(v, 'f', 0, 64) + "%"
}

// mbps is decimal megabytes per second (10^6 B/s), as the tables show wire rates.
func mbps(bytesPerS float64) string { return num(bytesPerS / 1e6) }

// orDash shows an empty string as a dash so table cells never look missing.
func orDash(s string) string {
	if strings.TrimSpace(s) == "" {
		return "–"
	}
	return s
}

// checkFlag is the wire-check marker of one point: "" when fine or never checked.
func checkFlag(p result.Point) string {
	if p.WireCheck == nil || p.WireCheck.OK {
		return ""
	}
	v := p.WireCheck.Verdict
	if v == "" {
		v = "wire check failed"
	}
	return "⚠ " + v
}

// threadsList formats thread counts as "1, 4, 16".
func threadsList(ts []int) string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = strconv.Itoa(t)
	}
	return strings.Join(s, ", ")
}

// threadsN is "1 thread" or "16 threads".
func threadsN(n int) string {
	if n == 1 {
		return "1 thread"
	}
	return strconv.Itoa(n) + " threads"
}
