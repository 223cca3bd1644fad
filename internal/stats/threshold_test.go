package stats

import (
	"math"
	"testing"
)

func trials(spec ...any) []Trial {
	var ts []Trial
	for i := 0; i < len(spec); i += 2 {
		ts = append(ts, Trial{X: spec[i].(float64), Pass: spec[i+1].(bool)})
	}
	return ts
}

func TestFitThreshold(t *testing.T) {
	// Unbounded from one side: nothing to fit.
	for _, ts := range [][]Trial{nil, trials(300.0, true, 600.0, true), trials(300.0, false), trials(300.0, false, 600.0, true)} {
		if f := FitThreshold(ts); f.OK {
			t.Errorf("%v: fit %+v, want not OK", ts, f)
		}
	}
	// A clean pass and fail: the limit lies between them, the interval reaches past both
	// (a single outcome near the limit could have gone the other way).
	f := FitThreshold(trials(500.0, true, 600.0, true, 660.0, false))
	if !f.OK || f.Est <= 600 || f.Est >= 660 || f.Lo >= 600 || f.Hi <= 660 || f.Lo >= f.Est || f.Hi <= f.Est {
		t.Errorf("clean bracket: %+v", f)
	}
	// 637 failed and 659 passed in one search: neither decides alone, the limit lies
	// between the outcomes around them.
	f = FitThreshold(trials(558.0, true, 610.0, true, 637.0, false, 659.0, true, 700.0, false))
	if !f.OK || f.Est < 610 || f.Est > 700 {
		t.Errorf("crossed outcomes: %+v", f)
	}
}

// Repeats near the limit narrow the interval; the estimate stays where half pass.
func TestFitThresholdRepeats(t *testing.T) {
	few := trials(600.0, true, 640.0, true, 640.0, false, 680.0, false)
	many := append(append(append([]Trial{}, few...), few...), few...)
	a, b := FitThreshold(few), FitThreshold(many)
	if !a.OK || !b.OK || b.Hi-b.Lo >= a.Hi-a.Lo || math.Abs(b.Est/640-1) > 0.02 {
		t.Errorf("4 trials %+v, 12 trials %+v: want the second narrower and near 640", a, b)
	}
}

// One failure far below the limit (a probe spoilt by something else) does not drag the
// limit down to it.
func TestFitThresholdLapse(t *testing.T) {
	clean := trials(300.0, true, 500.0, true, 600.0, true, 620.0, true, 640.0, false, 700.0, false)
	spoilt := append(trials(300.0, false), clean...)
	a, b := FitThreshold(clean), FitThreshold(spoilt)
	if math.Abs(b.Est/a.Est-1) > 0.03 {
		t.Errorf("clean %+v, with a failure at 300 %+v", a, b)
	}
}
