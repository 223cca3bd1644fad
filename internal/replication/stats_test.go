package replication

import (
	"math"
	"testing"
	"time"
)

func ramp(n int, every time.Duration, lag func(t float64) float64) []LagSample {
	var out []LagSample
	for i := 1; i <= n; i++ {
		at := time.Duration(i) * every
		out = append(out, LagSample{At: at, Lag: time.Duration(lag(at.Seconds()) * float64(time.Second))})
	}
	return out
}

func TestAnalyzeBoundedRule(t *testing.T) {
	rtt := 250 * time.Millisecond
	win := 30 * time.Second
	tests := []struct {
		name    string
		lag     func(float64) float64
		bounded bool
	}{
		{"flat at rtt/2", func(float64) float64 { return 0.15 }, true},
		{"sawtooth", func(t float64) float64 { return 0.13 + 0.1*math.Mod(t, 1) }, true},
		{"burst then settles", func(t float64) float64 {
			if t < 10 {
				return 2
			}
			return 0.2
		}, true},
		{"grows 10% over capacity", func(t float64) float64 { return 0.15 + 0.1*t }, false},
		{"slow growth but far behind", func(t float64) float64 { return 5 + 0.01*t }, false},
		{"grows 3% (below the slope limit, small)", func(t float64) float64 { return 0.15 + 0.03*t }, true},
		{"saturated: wanders 1.5-3 s, ends low", func(t float64) float64 {
			if t > 29 {
				return 1
			}
			return 2.25 + 0.75*math.Sin(t)
		}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := Analyze(ramp(300, 100*time.Millisecond, tc.lag), win, rtt, DefaultRule)
			if st.Bounded != tc.bounded {
				t.Fatalf("bounded = %v (%s), want %v; slope %.3f final %.2f", st.Bounded, st.Why, tc.bounded, st.SlopeSS, st.FinalS)
			}
			if !st.Complete {
				t.Fatalf("not complete: %s", st.Why)
			}
		})
	}
}

func TestAnalyzeStats(t *testing.T) {
	var s []LagSample
	for i := 1; i <= 100; i++ {
		s = append(s, LagSample{At: time.Duration(i) * 100 * time.Millisecond, Lag: time.Duration(i) * time.Millisecond})
	}
	s = append(s, LagSample{At: 20 * time.Second, Lag: time.Hour}) // outside the window: ignored
	st := Analyze(s, 10*time.Second, 0, DefaultRule)
	if st.N != 100 || st.MaxS != 0.1 || st.P99S != 0.099 {
		t.Fatalf("N %d max %v p99 %v, want 100, 0.1, 0.099", st.N, st.MaxS, st.P99S)
	}
	if got := Analyze(nil, time.Second, 0, DefaultRule); got.Bounded || got.Complete {
		t.Fatalf("no samples: %+v", got)
	}
	few := Analyze(s[:3], 10*time.Second, 0, DefaultRule)
	if few.Bounded || few.Complete {
		t.Fatalf("three samples judged: %+v", few)
	}
}

func TestSlope(t *testing.T) {
	xs := []float64{1, 2, 3, 4}
	if got := Slope(xs, []float64{3, 5, 7, 9}); math.Abs(got-2) > 1e-12 {
		t.Fatalf("slope %v, want 2", got)
	}
	if got := Slope([]float64{1, 1}, []float64{1, 2}); got != 0 {
		t.Fatalf("vertical slope %v, want 0", got)
	}
}

func TestPerSecond(t *testing.T) {
	s := []LagSample{{At: 100 * time.Millisecond, Lag: time.Second}, {At: 900 * time.Millisecond, Lag: 2 * time.Second},
		{At: 2500 * time.Millisecond, Lag: 500 * time.Millisecond}, {At: 9 * time.Second, Lag: time.Hour}}
	got := PerSecond(s, 3)
	want := []float64{2, -1, 0.5}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("PerSecond = %v, want %v", got, want)
		}
	}
}

func TestMbps(t *testing.T) {
	if got := Mbps(250_000, time.Second); got != 2 {
		t.Fatalf("Mbps = %v, want 2", got)
	}
	if got := Mbps(1, 0); got != 0 {
		t.Fatalf("Mbps over 0 s = %v", got)
	}
}
