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

var defaultMargin = Margin{Value: DefaultMargin, From: "--margin's default"}

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

func mustCompare(t *testing.T, in []Input) *Comparison {
	t.Helper()
	c, err := Compare(in, defaultMargin)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestGolden(t *testing.T) {
	for _, tc := range []struct {
		golden string
		runs   []string
	}{
		{"plain-vs-compression", []string{"quick-20mbit", "quick-20mbit-compression"}},
		{"two-runs-of-20mbit", []string{"earlier-20mbit", "quick-20mbit"}},
		{"three-runs", []string{"quick-20mbit", "quick-20mbit", "quick-20mbit-compression"}},
		{"hand-repeats", []string{"hand-repeats-a", "hand-repeats-b"}},
		{"hand-once-same-build", []string{"hand-once-a", "hand-once-a2"}},
		{"hand-once-change", []string{"hand-once-a", "hand-once-b"}},
	} {
		c := mustCompare(t, load(t, tc.runs...))
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

// tableOf is c's table of metric name; it fails the test when there is none.
func tableOf(t *testing.T, c *Comparison, name string) Table {
	t.Helper()
	for _, tb := range c.Tables {
		if tb.Metric == name {
			return tb
		}
	}
	t.Fatalf("no %s table in %+v", name, c.Tables)
	return Table{}
}

// The real 20 mbit points of a quick study (5 s each) against their compressed twins: one
// run's 5 measured seconds are 2 batches of 2 s, too few to test, whatever the change. The
// estimate still reads about +80%, and no second is counted as a sample.
func TestFiveSecondPointsAreTooShortToTest(t *testing.T) {
	c := mustCompare(t, load(t, "quick-20mbit", "quick-20mbit-compression"))
	tps := tableOf(t, c, "tps")
	if len(tps.Rows) != 3 {
		t.Fatalf("%d rows, want 3", len(tps.Rows))
	}
	for _, r := range tps.Rows {
		ch, u := r.Changes[0], r.Sides[0].Unit
		if ch.Tested || ch.Significant || ch.Ratio < 1.7 || ch.Ratio > 1.95 || !strings.Contains(ch.Reason, "need >= 4") {
			t.Errorf("%s: %+v, want an untested ~1.8x", r.Key, ch)
		}
		if u.Kind != Batches || u.N != 2 || u.BatchS != 2 || len(r.Sides[0].Values) != 2 {
			t.Errorf("%s: unit %+v values %v, want one run's 2 batches of 2 s", r.Key, u, r.Sides[0].Values)
		}
	}
	if g := tps.Geomean.Ratios[0]; g < 1.7 || g > 1.95 {
		t.Errorf("geomean ratio %.3f", g)
	}
}

// Repeats are independent runs: a +80% change in TPS is called better, and so is the
// drop of every latency percentile (less latency is better).
func TestRepeatsCallTheChangeBetterOrWorse(t *testing.T) {
	c := mustCompare(t, load(t, "hand-repeats-a", "hand-repeats-b"))
	if len(c.Tables) != 4 {
		t.Fatalf("%d tables, want TPS, p50, p95, p99", len(c.Tables))
	}
	for _, tb := range c.Tables {
		for _, r := range tb.Rows {
			ch := r.Changes[0]
			if !ch.Significant || ch.Verdict != "better" || r.Sides[0].Unit.Kind != Repeats || r.Sides[0].Unit.N != 5 {
				t.Errorf("%s %s: %+v (unit %+v), want called better on 5 repeats", tb.Metric, r.Key, ch, r.Sides[0].Unit)
			}
		}
	}
	// The other way round every change is worse.
	c = mustCompare(t, load(t, "hand-repeats-b", "hand-repeats-a"))
	for _, tb := range c.Tables {
		if ch := tb.Rows[0].Changes[0]; ch.Verdict != "worse" {
			t.Errorf("%s reversed: %+v, want worse", tb.Metric, ch)
		}
	}
}

// One run a side, 20 measured seconds each: 10 batch means of 2 s. A 10% loss of TPS and
// 10% more latency is called worse; a second run of the same build is "~" although its
// batches are tight enough to find a fraction of a percent.
func TestOneRunBatchMeans(t *testing.T) {
	c := mustCompare(t, load(t, "hand-once-a", "hand-once-b"))
	for _, name := range []string{"tps", "lat_p95_ms"} {
		for _, r := range tableOf(t, c, name).Rows {
			ch, u := r.Changes[0], r.Sides[1].Unit
			if !ch.Significant || ch.Verdict != "worse" || u.Kind != Batches || u.N != 10 || u.BatchS != 2 {
				t.Errorf("%s %s: %+v (unit %+v), want called worse on 10 batches of 2 s", name, r.Key, ch, u)
			}
		}
	}
	c = mustCompare(t, load(t, "hand-once-a", "hand-once-a2"))
	for _, tb := range c.Tables {
		for _, r := range tb.Rows {
			if ch := r.Changes[0]; ch.Significant || ch.Reason == "" || !ch.Tested {
				t.Errorf("%s %s: %+v, want a tested \"~\" with its reason", tb.Metric, r.Key, ch)
			}
		}
	}
	// p50 and p99 are not in a run's per-second series: no table, nothing invented.
	for _, tb := range c.Tables {
		if tb.Metric == "lat_p50_ms" || tb.Metric == "lat_p99_ms" {
			t.Errorf("a %s table from runs without repeats", tb.Metric)
		}
	}
}

// Repeats against one run's batch means are two kinds of sample: refused, naming the
// point, both runs and both units, before anything is printed.
func TestMixingRepeatsWithBatchesIsRefused(t *testing.T) {
	for _, runs := range [][]string{{"hand-repeats-a", "hand-once-a"}, {"hand-once-a", "hand-once-b", "hand-repeats-a"}} {
		_, err := Compare(load(t, runs...), defaultMargin)
		if !errors.Is(err, ErrMixedUnits) {
			t.Fatalf("%v: err = %v, want ErrMixedUnits", runs, err)
		}
		for _, want := range []string{"point 20mbit (20mbit, 8 threads, oltp_read_only, mariadb/sysbench)",
			"5 repeats", "one run's 10 batch means of 2 s", "compare like with like: run both with --repeat, or both once"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%v: %v\nwant it to name %q", runs, err, want)
			}
		}
	}
}

// A point run once without a per-second series (an older file) against one run's batches:
// both read as one run, the run's own figure, and nothing is tested.
func TestOldFileAgainstOneRunIsOneRunASide(t *testing.T) {
	c := mustCompare(t, load(t, "earlier-20mbit", "quick-20mbit"))
	for _, tb := range c.Tables {
		for _, r := range tb.Rows {
			for _, s := range r.Sides {
				if s.Unit != (Unit{Kind: Repeats, N: 1, Points: 1}) || len(s.Values) != 1 {
					t.Errorf("%s %s: side %+v, want 1 run", tb.Metric, r.Key, s)
				}
			}
			if ch := r.Changes[0]; ch.Tested || ch.Significant || ch.Reason == "" {
				t.Errorf("%s %s: %+v, want not tested", tb.Metric, r.Key, ch)
			}
		}
	}
	if tps := tableOf(t, c, "tps"); tps.Rows[0].Sides[1].Values[0] != 59.418000000000006 {
		t.Errorf("quick-20mbit read as one run: %v, want its point's TPS", tps.Rows[0].Sides[1].Values)
	}
}

func TestUnits(t *testing.T) {
	second := func(t float64, tps float64, warm bool) result.Second {
		return result.Second{T: t, TPS: tps, LatP95Ms: 10, Warmup: warm}
	}
	for _, tc := range []struct {
		name string
		pts  []result.Point
		want Unit
	}{
		{"repeats, one failed", []result.Point{{TPS: 10, Repeat: 1}, {TPS: 12, Repeat: 2}, {Failed: true, Repeat: 3},
			{TPS: 11, Repeat: 4, Seconds: []result.Second{second(1, 99, false)}}},
			Unit{Kind: Repeats, N: 3, Points: 4, Failed: 1}},
		{"all repeats failed", []result.Point{{Failed: true, Repeat: 1}, {Failed: true, Repeat: 2}},
			Unit{Kind: Repeats, N: 0, Points: 2, Failed: 2}},
		{"one run with seconds", []result.Point{{TPS: 50, WarmupS: 1, DurationS: 4, Seconds: []result.Second{
			second(1, 10, true), second(2, 49, false), second(3, 51, false), second(4, 50, false), second(5, 50, false), second(6, 5, false)}}},
			Unit{Kind: Batches, N: 2, BatchS: 2, Points: 1}},
		{"one run, one measured second", []result.Point{{TPS: 50, WarmupS: 1, DurationS: 1, Seconds: []result.Second{
			second(1, 10, true), second(2, 49, false)}}},
			Unit{Kind: Repeats, N: 1, Points: 1}},
		{"one run without seconds", []result.Point{{TPS: 50}}, Unit{Kind: Repeats, N: 1, Points: 1}},
	} {
		g := &group{points: tc.pts}
		g.setUnit()
		if g.unit != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, g.unit, tc.want)
		}
	}
	// The batches are the measured seconds' (warm-up and the tail after the duration left
	// out), cut as the report cuts them.
	g := &group{points: []result.Point{{TPS: 50, WarmupS: 1, DurationS: 4, Seconds: []result.Second{
		second(1, 10, true), second(2, 49, false), second(3, 51, false), second(4, 50, false), second(5, 52, false), second(6, 5, false)}}}}
	g.setUnit()
	xs, missing := metrics[0].values(g, g.unit)
	if len(xs) != 2 || xs[0] != 50 || xs[1] != 51 || missing != "" {
		t.Errorf("batch means %v (%q), want [50 51]", xs, missing)
	}
	if _, missing := metrics[1].values(g, g.unit); !strings.Contains(missing, "carry no p50: run both with --repeat") {
		t.Errorf("p50 of one run: %q, want why there is none", missing)
	}
}

func TestMismatchedPointsAreRefusedByName(t *testing.T) {
	_, err := Compare(load(t, "quick-20mbit", "quick-unlimited"), defaultMargin)
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
	_, err = Compare(in, defaultMargin)
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
	if _, err := Compare(both[:1:1], defaultMargin); err == nil {
		t.Error("one run: want an error")
	}
	_, err = Compare([]Input{both[0], both[2]}, defaultMargin)
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
	if _, err := Compare(load(t, "quick-20mbit", "quick-20mbit"), Margin{Value: 1.5}); !errors.Is(err, ErrBadMargin) {
		t.Errorf("margin 1.5: %v", err)
	}
}

// docs/compare.md quotes the TPS table its first command prints: the quote is in that
// command's golden output, so the page cannot drift from what compare prints.
func TestDocsQuoteTheGolden(t *testing.T) {
	doc, err := os.ReadFile("../../docs/compare.md")
	if err != nil {
		t.Fatal(err)
	}
	golden, err := os.ReadFile("testdata/hand-once-change.text.golden")
	if err != nil {
		t.Fatal(err)
	}
	blocks := strings.Split(string(doc), "```")
	if len(blocks) < 4 || !strings.Contains(blocks[3], "TPS (more is better)") {
		t.Fatalf("docs/compare.md: the second fenced block is not the quoted table:\n%s", blocks)
	}
	if !strings.Contains(string(golden), strings.TrimLeft(blocks[3], "\n")) {
		t.Errorf("docs/compare.md quotes\n%s\nwhich testdata/hand-once-change.text.golden does not hold", blocks[3])
	}
}
