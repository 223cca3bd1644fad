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
		"Goal replication-load ≥ 4.0× (maximum sustainable replication load, tunnel ÷ native, 2 Mbit / 250 ms): 2.95× at 2 Mbit/s, RTT 250 ms (2.25–3.84×; the limits fitted to 6 tunnel and 4 native probes, their 95% intervals joined on the log scale) — missed.",
		// The fixture kept no per-second series: without an interval the goal is not judged.
		"Goal replication-wire ≤ 0.30× (wire bytes per query at equal load, tunnel ÷ native, no rate cap, 250 ms): 0.40× at 300 QPS (no interval; batch means of the bytes per query, one mean a side) not shown (no interval); 0.39× at 1200 QPS",
		// One probe passed at the highest sustained load: a p99 1.30 s over the RTT, above the
		// goal, but one run is no interval.
		"Goal replication-p99-lag ≤ 1.0 s (tunnel p99 replication lag at a sustainable load, over the RTT): 1.30 s at 1710 QPS (the highest sustained), 2 Mbit/s, RTT 250 ms (no interval; 1 probe there (an interval needs 3)) — not shown (no interval).",
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
	at := &result.Point{LinkRateBps: 2_000_000, Replication: &result.ReplicationStats{RTTMs: 250}}
	nat := result.Edge{Channel: "native", Limit: 600, FirstFailed: 612, At: at, Probes: 4}
	for _, tc := range []struct {
		limit, failed float64
		want          string
	}{
		{2460, 2820, "4.10× at 2 Mbit/s, RTT 250 ms (4.02–4.70×; the range the searches' brackets allow (not a 95% interval), 5 tunnel and 4 native probes) — met."},
		{2280, 2760, "(3.73–4.60×; the range the searches' brackets allow (not a 95% interval), 5 tunnel and 4 native probes) — not shown (the interval straddles ≥ 4.0×)."},
		{1800, 2100, "(2.94–3.50×; the range the searches' brackets allow (not a 95% interval), 5 tunnel and 4 native probes) — missed."},
		{2460, 0, "4.10× at 2 Mbit/s, RTT 250 ms (no interval; a search did not bracket its limit, 5 tunnel and 4 native probes) — not shown (no interval)."},
	} {
		got := judge("replication-load", loadCase(result.Edge{Channel: "tunnel", Limit: tc.limit, FirstFailed: tc.failed, At: at, Probes: 5}, nat)).Sentence()
		if !strings.Contains(got, tc.want) {
			t.Errorf("tunnel %v–%v: %q, want %q", tc.limit, tc.failed, got, tc.want)
		}
	}
}
