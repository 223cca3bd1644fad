package stats

import "math"

// Line is a least-squares straight line y = Slope·x + Intercept through N points; R2 is
// its coefficient of determination (1 when every point lies on it, 0 when N < 3 or y does
// not vary).
type Line struct {
	Slope, Intercept, R2 float64
	N                    int
}

// At is the line's y at x.
func (l Line) At(x float64) float64 { return l.Slope*x + l.Intercept }

// FitLine fits a least-squares line through (xs[i], ys[i]); ok is false with fewer than
// two points, slices of different lengths, or every x the same (no slope to fit).
func FitLine(xs, ys []float64) (Line, bool) {
	n := len(xs)
	if n < 2 || n != len(ys) {
		return Line{}, false
	}
	mx, my := Mean(xs), Mean(ys)
	var sxx, sxy, syy float64
	for i := range xs {
		dx, dy := xs[i]-mx, ys[i]-my
		sxx += dx * dx
		sxy += dx * dy
		syy += dy * dy
	}
	if sxx == 0 {
		return Line{}, false
	}
	l := Line{Slope: sxy / sxx, N: n}
	l.Intercept = my - l.Slope*mx
	if n > 2 && syy > 0 {
		var sse float64
		for i := range xs {
			r := ys[i] - l.At(xs[i])
			sse += r * r
		}
		l.R2 = math.Max(0, 1-sse/syy)
	}
	return l, true
}
