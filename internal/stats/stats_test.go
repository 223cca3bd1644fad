package stats

import (
	"math"
	"testing"
)

func TestStats(t *testing.T) {
	tests := []struct {
		name             string
		xs               []float64
		mean, cv, ciHalf float64
	}{
		{"empty", nil, 0, 0, 0},
		{"one", []float64{5}, 5, 0, 0},
		// sd = 1 (sample), t(0.975, 2) = 4.303, half = 4.303/sqrt(3).
		{"three", []float64{9, 10, 11}, 10, 0.1, 4.303 / math.Sqrt(3)},
		{"two", []float64{1, 3}, 2, math.Sqrt2 / 2, 12.706},
		{"constant", []float64{4, 4, 4, 4}, 4, 0, 0},
		{"zero mean", []float64{-1, 1}, 0, 0, 12.706},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Mean(tc.xs); math.Abs(got-tc.mean) > 1e-12 {
				t.Errorf("Mean = %v, want %v", got, tc.mean)
			}
			if got := CV(tc.xs); math.Abs(got-tc.cv) > 1e-12 {
				t.Errorf("CV = %v, want %v", got, tc.cv)
			}
			m, h := CI95(tc.xs)
			if math.Abs(m-tc.mean) > 1e-12 || math.Abs(h-tc.ciHalf) > 1e-9 {
				t.Errorf("CI95 = %v ± %v, want %v ± %v", m, h, tc.mean, tc.ciHalf)
			}
		})
	}
}

func TestT975(t *testing.T) {
	// Reference quantiles of Student's t (two-sided 95%).
	for df, want := range map[int]float64{1: 12.706, 5: 2.571, 30: 2.042, 31: 2.040, 40: 2.021, 60: 2.000, 120: 1.980, 100000: 1.960} {
		if got := t975(df); math.Abs(got-want) > 0.001 {
			t.Errorf("t975(%d) = %.4f, want %.3f", df, got, want)
		}
	}
}

// A large sample's interval shrinks like 1/sqrt(n) with the normal quantile.
func TestCI95LargeN(t *testing.T) {
	xs := make([]float64, 1000)
	for i := range xs {
		xs[i] = float64(i % 2) // sd ≈ 0.50025
	}
	_, h := CI95(xs)
	want := 1.962 * stddev(xs) / math.Sqrt(1000)
	if math.Abs(h-want) > 0.001 {
		t.Errorf("half = %v, want ≈ %v", h, want)
	}
}

func TestPercentile(t *testing.T) {
	tests := []struct {
		xs   []float64
		p    float64
		want float64
	}{
		{nil, 99, 0},
		{[]float64{3}, 99, 3},
		{[]float64{5, 1, 4, 2, 3}, 50, 3},
		{[]float64{5, 1, 4, 2, 3}, 100, 5},
		{[]float64{5, 1, 4, 2, 3}, 1, 1},
	}
	for _, tc := range tests {
		if got := Percentile(tc.xs, tc.p); got != tc.want {
			t.Errorf("Percentile(%v, %v) = %v, want %v", tc.xs, tc.p, got, tc.want)
		}
	}
}
