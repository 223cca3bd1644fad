package study

import (
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/result"
)

// Calibration alternates the two settings round by round, each cell on its own wire, so
// every run follows a re-shape; the lab starts on the first and checks no wire between.
func TestCalibrateAlternates(t *testing.T) {
	a, b := link.Condition{RateBps: 20_000_000}, link.Condition{}
	st := NewCalibrate(CalibrateOptions{Bench: Bench{Threads: []int{8}, Duration: 10 * time.Second, Warmup: 2 * time.Second,
		Workload: "oltp_read_only", Tables: 4, TableSize: 10000}, A: a, B: b, Rounds: 3})
	if st.Total() != 6 || st.Name() != result.CalibrateStudy {
		t.Fatalf("%d cells of %q, want 6 of calibrate", st.Total(), st.Name())
	}
	for i := range 6 {
		c, ok := st.Next(nil)
		lc := c.(LoadCell)
		want, series := a, "20mbit"
		if i%2 == 1 {
			want, series = b, "unlimited"
		}
		if !ok || lc.Link == nil || *lc.Link != want || lc.Series != series || lc.Repeat != i/2+1 || lc.Threads != 8 || lc.Study != result.CalibrateStudy {
			t.Errorf("cell %d: %+v, want %s round %d", i, lc, series, i/2+1)
		}
	}
	if n := st.Needs(); n.CheckWire || n.Condition != a || len(n.Spec.Series) != 2 {
		t.Errorf("needs %+v: want the first setting, no wire check, both series", n)
	}
}
