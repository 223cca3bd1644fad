package report

import (
	"strings"
	"testing"

	"github.com/wirelab/wirelab/internal/result"
)

func syncFindingPoint(mode string, rtt float64, threads int, p50, tps float64) result.Point {
	return result.Point{Study: "sync", Series: mode, Threads: threads, TPS: tps, LatP50Ms: p50,
		Sync: &result.SyncStats{Mode: mode, Control: mode == "async", RTTMs: rtt, CommitP50Ms: p50, ChecksumOK: true}}
}

func TestSyncFindings(t *testing.T) {
	var pts []result.Point
	semiTPS := map[float64]float64{0: 4000, 20: 3200, 100: 800}
	for _, r := range []float64{0, 20, 100} {
		pts = append(pts, syncFindingPoint("async", r, 1, 0.5, 2000), syncFindingPoint("async", r, 32, 1, 8000),
			syncFindingPoint("semisync-after-sync", r, 1, 1.02*r+1.4, 500), syncFindingPoint("semisync-after-sync", r, 32, r+2, semiTPS[r]))
	}
	fell := syncFindingPoint("semisync-after-sync", 100, 1, 0.6, 1500)
	fell.Sync.FellBack = true
	pts = append(pts, fell)
	got := strings.Join(SyncFindings(pts, 3000), "\n")
	for _, want := range []string{
		"async: each commit pays 0.00 RTT + 0.50 ms (median commit at 1 thread, fitted over 3 RTTs",
		"semisync-after-sync: each commit pays 1.02 RTT + 1.40 ms (median commit at 1 thread, fitted over 3 RTTs, R² 1.000)",
		"at 100 ms RTT and 1 thread, the median commit takes: async 0.50 ms, semisync-after-sync 103.4 ms",
		"with 32 threads semisync-after-sync sustains 3200 TPS at 20 ms — 40% of async; 800.0 TPS at 100 ms — 10% of async",
		"with 32 threads async stays at or above 3000 TPS at every RTT measured (up to 100 ms)",
		"with 32 threads semisync-after-sync falls below 3000 TPS at 100 ms RTT", // 3200 at 20 ms is still above
		"semisync-after-sync fell back to asynchronous at 1 point(s)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("findings lack %q:\n%s", want, got)
		}
	}
}
