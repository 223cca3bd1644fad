package report

import (
	"fmt"
	"strings"

	"github.com/wirelab/wirelab/internal/result"
)

// syncSection is the synchronous-replication study: the findings (SyncFindings), what
// each commit pays per mode, the commit latency and throughput by RTT as charts, and every
// point in one table. Numbers come from Point.Sync and the point's own fields.
type syncSection struct{}

func (syncSection) Study() string { return "sync" }

func (syncSection) Build(r *result.Run, pts []result.Point) ([]Block, error) {
	target := 0.0
	if v, ok := r.Spec.Extra["target_tps"]; ok {
		if _, err := fmt.Sscanf(v, "%g", &target); err != nil {
			return nil, fmt.Errorf("spec target_tps %q: %w", v, err)
		}
	}
	bs := []Block{
		Heading{2, "Synchronous replication: what a commit costs"},
		Paragraph{"The load driver runs beside the primary (unshaped, over its unix socket); the shaped wire lies between the primary and its replica. " +
			"Each series is a mode: how long a commit waits for the replica. Commit latency is the transaction's latency as the driver sees it; " +
			"only the commit's wait crosses the wire."},
	}
	if fs := SyncFindings(pts, target); len(fs) > 0 {
		bs = append(bs, Heading{3, "Findings"}, List{fs})
	}
	var bad []string
	for _, p := range pts {
		if !p.Usable() {
			bad = append(bad, fmt.Sprintf("%s at %s ms, %s: %s", p.Series, rttText(p.Sync.RTTMs), threadsN(p.Threads), orDash(p.FailReason)))
		}
	}
	if len(bad) > 0 {
		bs = append(bs, Callout{"warning", fmt.Sprintf("%d point(s) failed or their replica did not match, left out of the findings: %s.", len(bad), strings.Join(bad, "; "))})
	}
	if fits := result.CommitFits(pts); len(fits) > 0 {
		t := Table{Caption: "What each commit pays: a line through the median commit latency by RTT",
			Header: []string{"mode", "threads", "RTTs per commit", "+ ms", "RTTs fitted", "R²"}, Numeric: numericCols(6)}
		for _, f := range fits {
			r2 := "–"
			if f.Points > 2 {
				r2 = fmt.Sprintf("%.3f", f.R2)
			}
			t.Rows = append(t.Rows, []string{f.Mode, fmt.Sprint(f.Threads), fmtRTTs(f.RTTs), num(f.ConstMs), fmt.Sprint(f.Points), r2})
		}
		bs = append(bs, t)
	}
	bs = append(bs, syncCharts(pts)...)
	return append(bs, syncTable(pts)), nil
}

// syncCharts are the median commit latency at the fewest threads and the TPS at the most
// threads, by RTT, one line per mode.
func syncCharts(pts []result.Point) []Block {
	rtts, threads := syncGrid(pts)
	if len(rtts) < 2 || len(threads) == 0 {
		return nil
	}
	chart := func(name, title, ylabel string, th int, fig func(result.Point) float64) *Chart {
		c := &Chart{Name: name, Title: title, XLabel: "round-trip time primary ↔ replica (ms)", YLabel: ylabel}
		for i, mode := range result.SyncModes(pts) {
			l := ChartLine{Label: mode, Color: i}
			for _, r := range rtts {
				if v, ok := result.SyncMean(pts, mode, r, th, fig); ok {
					l.Points = append(l.Points, XY{r, v})
				}
			}
			c.Lines = append(c.Lines, l)
		}
		return c
	}
	lo, hi := threads[0], threads[len(threads)-1]
	commit := chart("sync-commit", fmt.Sprintf("Median commit latency, %s", threadsN(lo)), "commit p50 (ms)", lo,
		func(p result.Point) float64 { return p.Sync.CommitP50Ms })
	commit.Caption = "A synchronous mode's line climbs with the round trip; its slope is the round trips each commit pays."
	tps := chart("sync-tps", fmt.Sprintf("Throughput, %s", threadsN(hi)), "TPS", hi, func(p result.Point) float64 { return p.TPS })
	tps.Caption = "How much of the control's throughput each mode keeps as the replica moves away."
	return []Block{commit, tps}
}

// syncTable is every point.
func syncTable(pts []result.Point) Table {
	t := Table{Caption: "Every point (wire up = replica → primary, down = primary → replica; CPU in cores)",
		Header: []string{"mode", "RTT ms", "threads", "TPS", "commit p50 ms", "p95", "p99", "wire B/txn", "up MB/s", "down MB/s",
			"CPU primary", "CPU replica", "replica", "check"},
		Numeric: []bool{false, true, true, true, true, true, true, true, true, true, true, true, false, false}}
	for _, p := range pts {
		s := p.Sync
		check := "ok"
		switch {
		case p.Failed:
			check = "FAILED"
		case !s.ChecksumOK:
			check = "mismatch"
		}
		state := orDash(s.Replica)
		if s.FellBack {
			state += fmt.Sprintf(" (fell back, %d async commits)", s.AsyncTx)
		}
		t.Rows = append(t.Rows, []string{p.Series, rttText(s.RTTMs), fmt.Sprint(p.Threads), num(p.TPS), num(s.CommitP50Ms), num(s.CommitP95Ms),
			num(s.CommitP99Ms), num(s.WireBytesPerTxn), mbps(p.WireBytesPerSUp), mbps(p.WireBytesPerSDown), num(p.CPUServer), num(p.CPUClient),
			state, check + checkFlag(p)})
	}
	return t
}
