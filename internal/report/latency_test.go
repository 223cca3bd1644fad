package report

import (
	"strings"
	"testing"

	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/stats"
)

// Two repeats of a point: the run table reads the percentiles from their merged
// histograms (the p99 of the merge, not the mean of two p99s).
func TestRunTableMergesTheRepeatsHistograms(t *testing.T) {
	fast := stats.NewHistogram([]stats.Bucket{{Ms: 1, Count: 98}, {Ms: 2, Count: 2}})
	slow := stats.NewHistogram([]stats.Bucket{{Ms: 1, Count: 90}, {Ms: 40, Count: 10}})
	pts := []result.Point{
		{Study: "run", Series: "unlimited", Workload: "oltp_read_only", Threads: 4, Repeat: 1, TPS: 100, LatHistogram: &fast, LatMaxMs: 2.1},
		{Study: "run", Series: "unlimited", Workload: "oltp_read_only", Threads: 4, Repeat: 2, TPS: 90, LatHistogram: &slow, LatMaxMs: 44},
	}
	bs, err := runSection{}.Build(&result.Run{Study: "run"}, pts)
	if err != nil {
		t.Fatal(err)
	}
	tbl := bs[2].(Table)
	if tbl.Header[3] != latencyHeader {
		t.Fatalf("header %q", tbl.Header)
	}
	// 200 latencies: p50 and p95 (rank 190) are 1 ms, p99 (rank 198) is 40 ms.
	if got := tbl.Rows[0][3]; got != "1.00 / 2.00 / 40.00 (max 44.00)" {
		t.Errorf("latency cell %q", got)
	}
	pts[1].LatHistogram = nil // an older point: no percentiles to merge, the old column
	bs, _ = runSection{}.Build(&result.Run{Study: "run"}, pts)
	if h := bs[2].(Table).Header[3]; strings.Contains(h, "p50") {
		t.Errorf("header %q for points without histograms", h)
	}
}
