package replication

import (
	"strings"
	"testing"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/stats"
)

// testdata/quick-results.json is a real `wirelab study replication --quick` run on a
// 2-core box (per-second series dropped to keep it small).
func loadQuick(t *testing.T) []result.Point {
	t.Helper()
	r, err := result.ReadFile("testdata/quick-results.json")
	if err != nil {
		t.Fatal(err)
	}
	return r.Points
}

func TestHeadlinesFromARealRun(t *testing.T) {
	h := strings.Join(Headlines(TermsFor(engine.MariaDB), loadQuick(t), stats.DefaultMargin), "\n")
	for _, want := range []string{
		"Checksums: all 30 points caught up and matched the source.",
		"lag-vs-rtt tunnel: at RTT 250 ms highest lag 0.35 s (p99 0.25 s)",
		// Each limit is fitted at the loads its probes delivered (the fixture's QPS), not at
		// their targets.
		"max-load native: 637 QPS sustained, 95% interval 543–763 from 4 probes (binlog 1.73 Mbit/s, wire 1.87 Mbit/s",
		"max-load tunnel: 1883 QPS sustained",
		", 2.95× (2.25–3.84×) native.",
		"bandwidth tunnel: wire bytes per query ÷ native's at the same load: 0.40× (no CI: one mean a side) at 300 QPS, 0.39× (no CI: one mean a side) at 1200 QPS.",
		"Goal max sustainable QPS tunnel ≥ 4× native: 2.95× (2.25–3.84×) — NOT met",
		// The fixture kept no per-second series: without an interval the goal is not judged.
		"Goal wire bytes per query tunnel ≤ 0.30× native at the same load: worst 0.40× (no CI: one mean a side) — not shown: no range to judge it on",
		"Goal tunnel p99 lag ≤ RTT + 1 s at a sustainable load: 1.55 s at its highest sustained load (limit 1.25 s) — NOT met.",
	} {
		if !strings.Contains(h, want) {
			t.Errorf("headlines lack %q:\n%s", want, h)
		}
	}
}

func TestHeadlinesCountFailures(t *testing.T) {
	pts := loadQuick(t)
	pts[0].Replication.ChecksumOK = false
	pts[1].Failed = true
	h := Headlines(TermsFor(engine.MariaDB), pts, stats.DefaultMargin)
	if !strings.HasPrefix(h[0], "Checksums: 2 of 30 points FAILED") {
		t.Fatalf("first headline %q", h[0])
	}
	if got := Headlines(TermsFor(engine.MariaDB), nil, stats.DefaultMargin); len(got) != 1 {
		t.Fatalf("no points: %v", got)
	}
}

// A goal is met only when the whole range clears it: a tunnel whose brackets allow 3.7×
// to 4.6× native's load has not shown that it reaches 4×.
func TestGoalsJudgedOnTheWholeRange(t *testing.T) {
	nat := result.Edge{Channel: "native", Limit: 600, FirstFailed: 612}
	for _, tc := range []struct {
		limit, failed float64
		want          string
	}{
		{2460, 2820, "(4.02–4.70×) — met"},
		{2280, 2760, "(3.73–4.60×) — not shown: the range straddles the goal"},
		{1800, 2100, "(2.94–3.50×) — NOT met"},
		{2460, 0, "range unknown: a limit was not bracketed) — not shown: no range to judge it on"},
	} {
		got := maxLoadGoal(result.Edge{Channel: "tunnel", Limit: tc.limit, FirstFailed: tc.failed}, nat)
		if !strings.Contains(got, tc.want) {
			t.Errorf("tunnel %v–%v: %q, want %q", tc.limit, tc.failed, got, tc.want)
		}
	}
}
