package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

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

// Num is num for other packages' tables (wirelab compare), so a figure reads the same in a
// report and beside it.
func Num(v float64) string { return num(v) }
