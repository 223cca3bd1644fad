package stats

import (
	"math"
	"testing"
)

func TestFitLine(t *testing.T) {
	t.Run("exact", func(t *testing.T) {
		// 1.02 RTT + 1.4 ms at RTTs 0, 20, 100.
		xs := []float64{0, 20, 100}
		ys := []float64{1.4, 1.02*20 + 1.4, 1.02*100 + 1.4}
		l, ok := FitLine(xs, ys)
		if !ok || math.Abs(l.Slope-1.02) > 1e-9 || math.Abs(l.Intercept-1.4) > 1e-9 || math.Abs(l.R2-1) > 1e-9 || l.N != 3 {
			t.Fatalf("FitLine = %+v, %v; want slope 1.02, intercept 1.4, R2 1", l, ok)
		}
		if got := l.At(50); math.Abs(got-52.4) > 1e-9 {
			t.Errorf("At(50) = %g, want 52.4", got)
		}
	})
	t.Run("noisy", func(t *testing.T) {
		l, ok := FitLine([]float64{0, 1, 2, 3}, []float64{0, 2, 1, 3})
		if !ok || math.Abs(l.Slope-0.8) > 1e-9 || math.Abs(l.Intercept-0.3) > 1e-9 || l.R2 <= 0 || l.R2 >= 1 {
			t.Fatalf("FitLine = %+v, %v; want slope 0.8, intercept 0.3, 0 < R2 < 1", l, ok)
		}
	})
	for name, c := range map[string][2][]float64{
		"one point":   {{1}, {2}},
		"same x":      {{5, 5, 5}, {1, 2, 3}},
		"uneven sets": {{1, 2}, {1}},
	} {
		t.Run(name, func(t *testing.T) {
			if l, ok := FitLine(c[0], c[1]); ok {
				t.Errorf("FitLine = %+v, true; want no fit", l)
			}
		})
	}
}
