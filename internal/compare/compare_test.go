package compare

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirelab/wirelab/internal/result"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func load(t *testing.T, names ...string) []Input {
	t.Helper()
	var in []Input
	for _, n := range names {
		r, err := result.Read(filepath.Join("testdata", n))
		if err != nil {
			t.Fatal(err)
		}
		in = append(in, Input{Name: n, Run: r})
	}
	return in
}

func TestGolden(t *testing.T) {
	for _, tc := range []struct {
		golden string
		runs   []string
	}{
		{"plain-vs-compression", []string{"quick-20mbit", "quick-20mbit-compression"}},
		{"two-runs-of-20mbit", []string{"earlier-20mbit", "quick-20mbit"}},
		{"three-runs", []string{"quick-20mbit", "quick-20mbit", "quick-20mbit-compression"}},
	} {
		c, err := Compare(load(t, tc.runs...), DefaultMargin)
		if err != nil {
			t.Fatalf("%s: %v", tc.golden, err)
		}
		for _, f := range Formats {
			t.Run(tc.golden+"/"+string(f), func(t *testing.T) {
				var b bytes.Buffer
				if err := Write(&b, c, f); err != nil {
					t.Fatal(err)
				}
				path := filepath.Join("testdata", tc.golden+"."+string(f)+".golden")
				if *update {
					if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if b.String() != string(want) {
					t.Errorf("%s differs (go test -update rewrites it):\n%s", path, b.String())
				}
			})
		}
	}
}

// The real 20 mbit points against their compressed twins: every point a significant
// change of about +80%, and the geomean says so too.
func TestCompressionAt20mbitIsCalled(t *testing.T) {
	c, err := Compare(load(t, "quick-20mbit", "quick-20mbit-compression"), DefaultMargin)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Rows) != 3 {
		t.Fatalf("%d rows, want 3", len(c.Rows))
	}
	for _, r := range c.Rows {
		ch := r.Changes[0]
		if !ch.Significant || ch.Ratio < 1.7 || ch.Ratio > 1.95 || ch.RatioCI == nil || ch.RatioCI.Lo < 1.5 {
			t.Errorf("%s: %+v, want a significant ~1.8x", r.Key, ch)
		}
		if r.Sides[0].Samples.Kind != FromSeconds || len(r.Sides[0].Samples.Values) != 5 {
			t.Errorf("%s: samples %+v, want the 5 seconds after warm-up", r.Key, r.Sides[0].Samples)
		}
	}
	if g := c.Geomean.Ratios[0]; g < 1.7 || g > 1.95 {
		t.Errorf("geomean ratio %.3f", g)
	}
}

// Two runs of the same points, two days apart: nothing called. The earlier file has no
// per-second series, so each of its points is one sample: too few to call anything.
func TestSamePointsTwiceAreNotCalled(t *testing.T) {
	for _, runs := range [][]string{{"earlier-20mbit", "quick-20mbit"}, {"quick-20mbit", "quick-20mbit"}} {
		c, err := Compare(load(t, runs...), DefaultMargin)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range c.Rows {
			if ch := r.Changes[0]; ch.Significant || ch.Reason == "" {
				t.Errorf("%v %s: %+v, want \"~\" with a reason", runs, r.Key, ch)
			}
		}
	}
}

// A link-bound point repeats within a few percent, and its per-second samples are tight
// and autocorrelated: a 2% shift is significant to the test but not called.
func TestChangeWithinTheMarginIsNotCalled(t *testing.T) {
	a := Samples{Kind: FromSeconds, Values: []float64{59.4, 59.6, 59.2, 59.5, 59.3, 59.4}}
	b := Samples{Kind: FromSeconds, Values: []float64{58.2, 58.4, 58.1, 58.3, 58.0, 58.2}}
	ch := decide(a, b, DefaultMargin)
	if ch.Significant || ch.P >= Alpha || !strings.Contains(ch.Reason, "margin") {
		t.Errorf("2%% shift: %+v, want p < 0.05 and \"~\" for the margin", ch)
	}
	if ch := decide(a, b, 0.01); !ch.Significant {
		t.Errorf("2%% shift with a 1%% margin: %+v, want it called", ch)
	}
	three := Samples{Kind: FromRepeats, Values: []float64{100, 101, 102}}
	if ch := decide(three, Samples{Kind: FromRepeats, Values: []float64{200, 201, 202}}, DefaultMargin); ch.Significant || ch.P != 0 || ch.Ratio < 1.9 {
		t.Errorf("3 repeats a side: %+v, want the ratio and no test", ch)
	}
}

func TestRepeatsAreTheSamples(t *testing.T) {
	pts := []result.Point{{TPS: 10, Repeat: 1}, {TPS: 12, Repeat: 2}, {Failed: true, Repeat: 3}, {TPS: 11, Repeat: 4,
		Seconds: []result.Second{{T: 1, TPS: 99}}}}
	s := samplesOf(pts)
	if s.Kind != FromRepeats || len(s.Values) != 3 || s.Failed != 1 {
		t.Errorf("samples %+v, want the three repeats that did not fail", s)
	}
	one := samplesOf([]result.Point{{TPS: 50, WarmupS: 1, DurationS: 2, Seconds: []result.Second{
		{T: 1, TPS: 10, Warmup: true}, {T: 2, TPS: 49}, {T: 3, TPS: 51}, {T: 4, TPS: 5}}}})
	if one.Kind != FromSeconds || len(one.Values) != 2 || one.Values[0] != 49 {
		t.Errorf("one point: %+v, want its measured seconds", one)
	}
}

func TestMismatchedPointsAreRefusedByName(t *testing.T) {
	_, err := Compare(load(t, "quick-20mbit", "quick-unlimited"), DefaultMargin)
	if !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), "link_rate_bps (20mbit vs unlimited)") {
		t.Fatalf("err = %v, want ErrMismatch naming link_rate_bps", err)
	}
	// Different thread counts: the new run has none at 32 threads.
	in := load(t, "quick-20mbit", "quick-20mbit-compression")
	var pts []result.Point
	for _, p := range in[1].Run.Points {
		if p.Threads != 32 {
			pts = append(pts, p)
		}
	}
	in[1].Run.Points = pts
	_, err = Compare(in, DefaultMargin)
	if !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), "threads (32 vs ") {
		t.Errorf("err = %v, want the 32-thread point refused naming threads", err)
	}
	// Two series at one condition on each side that do not pair by name.
	both := load(t, "quick-20mbit", "quick-20mbit-compression", "quick-20mbit", "quick-20mbit")
	both[0].Run.Points = append(both[0].Run.Points, both[1].Run.Points...)
	for i := range both[3].Run.Points {
		both[3].Run.Points[i].Series = "20mbit+tls"
	}
	both[2].Run.Points = append(both[2].Run.Points, both[3].Run.Points...)
	if _, err := Compare(both[:1:1], DefaultMargin); err == nil {
		t.Error("one run: want an error")
	}
	_, err = Compare([]Input{both[0], both[2]}, DefaultMargin)
	if !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), "pair only by name") {
		t.Errorf("err = %v, want the ambiguous series refused", err)
	}
}

func TestParseFormat(t *testing.T) {
	for _, f := range Formats {
		if got, err := ParseFormat(string(f)); err != nil || got != f {
			t.Errorf("ParseFormat(%q) = %q, %v", f, got, err)
		}
	}
	if _, err := ParseFormat("xml"); !errors.Is(err, ErrBadFormat) || !strings.Contains(err.Error(), "text, md, html, json") {
		t.Errorf("xml: %v", err)
	}
	if _, err := Compare(load(t, "quick-20mbit", "quick-20mbit"), 1.5); !errors.Is(err, ErrBadMargin) {
		t.Errorf("margin 1.5: %v", err)
	}
}
