package study

import (
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/metrics"
	"github.com/wirelab/wirelab/internal/pgbench"
	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/stats"
)

// pgbench's progress lines, captured from a real run, become the same per-second series
// sysbench's interval lines do: TPS, QPS as TPS × the script's statements, and the mean
// latency each second.
func TestProgressLinesBecomeTicks(t *testing.T) {
	b, err := os.ReadFile("../pgbench/testdata/tpcb.stderr")
	if err != nil {
		t.Fatal(err)
	}
	var ticks []Tick
	for _, l := range strings.Split(string(b), "\n") {
		if p, ok := pgbench.ParseProgress(l); ok {
			ticks = append(ticks, progressTick(p, pgbench.Statements(pgbench.TPCB)))
		}
	}
	want := []Tick{{T: 1, TPS: 7007.7, QPS: 7007.7 * 7, LatAvgMs: 0.282, LatStddevMs: 0.307},
		{T: 2, TPS: 8474, QPS: 8474 * 7, LatAvgMs: 0.236, LatStddevMs: 0.164}}
	if len(ticks) != len(want) {
		t.Fatalf("ticks %+v, want %+v", ticks, want)
	}
	for i := range want {
		if ticks[i] != want[i] {
			t.Errorf("tick %d: %+v, want %+v", i, ticks[i], want[i])
		}
	}
	if tk := progressTick(pgbench.Progress{T: 3, TPS: 10, Failed: 2}, 1); tk.Errors != 2 {
		t.Errorf("failed transactions: %+v", tk)
	}
}

// A pgbench point goes through the same closed loop as a sysbench one: warm-up dropped,
// the driver's own latency (pooled over the measured seconds, not Little's law), failed
// transactions as errors, no percentile, and one round trip per select-only transaction.
func TestClosedLoopOnPgbenchTicks(t *testing.T) {
	c := LoadCell{Threads: 10, Warmup: 2 * time.Second, Duration: 3 * time.Second}
	var ss []metrics.Sample
	ld := &Load{Totals: &Totals{TPS: 440, QPS: 440, LatAvgMs: 22, Errors: 1}}
	for i := 1; i <= 6; i++ { // a sixth line after -T's end is dropped with the drain
		tk := Tick{T: float64(i), TPS: 500, QPS: 500, LatAvgMs: 20, LatStddevMs: 1}
		switch i {
		case 1, 2:
			tk = Tick{T: float64(i), TPS: 100, QPS: 100, LatAvgMs: 90, LatStddevMs: 30} // warm-up
		case 4:
			tk.TPS, tk.QPS, tk.LatAvgMs, tk.LatStddevMs = 250, 250, 23, 2
		}
		ld.Ticks = append(ld.Ticks, tk)
		ss = append(ss, metrics.Sample{T: time.Duration(i) * time.Second, UpBytesPerS: 50e3, DownBytesPerS: 60e3,
			CPUServer: 0.2, CPUClient: 0.1, CPUTotal: 0.4})
	}
	p := result.Point{Threads: 10, LinkDelayMs: 10}
	closedLoop(&p, c, ld, ss, true, result.Cores{Shared: 2}, 1)
	if len(p.Seconds) != 5 || !p.Seconds[1].Warmup || p.Seconds[2].Warmup || p.Seconds[3].LatAvgMs != 23 {
		t.Fatalf("seconds %+v", p.Seconds)
	}
	if math.Abs(p.TPS-1250.0/3) > 1e-9 || p.QPS != p.TPS || p.LatP95Ms != 0 || p.Errors != 1 {
		t.Errorf("TPS %v QPS %v p95 %v errors %d", p.TPS, p.QPS, p.LatP95Ms, p.Errors)
	}
	// 1000 transactions at 20 ± 1 ms and 250 at 23 ± 2 ms.
	avg := (1000*20 + 250*23) / 1250.0
	sd := math.Sqrt((1000*(1+400)+250*(4+529))/1250.0 - avg*avg)
	if math.Abs(p.LatAvgMs-avg) > 1e-9 || math.Abs(p.LatStddevMs-sd) > 1e-9 {
		t.Errorf("latency %v ± %v, want %v ± %v", p.LatAvgMs, p.LatStddevMs, avg, sd)
	}
	if p.Profile == nil || p.Profile.RoundTrips != 1 || p.Bottleneck == "" {
		t.Errorf("profile %+v, bottleneck %q", p.Profile, p.Bottleneck)
	}
}

// A run too short for a progress line falls back on pgbench's summary.
func TestClosedLoopFallsBackOnTheSummary(t *testing.T) {
	var p result.Point
	closedLoop(&p, LoadCell{Threads: 2, Duration: time.Second},
		&Load{Totals: &Totals{TPS: 90, QPS: 630, LatAvgMs: 21.5, LatStddevMs: 0.5}}, nil, true, result.Cores{Shared: 2}, 1)
	if p.TPS != 90 || p.QPS != 630 || p.LatAvgMs != 21.5 || p.LatStddevMs != 0.5 {
		t.Errorf("point %+v", p)
	}
}

// The driver decides the data set: pgbench's tables at a scale, or sysbench's tables;
// the knobs of the other driver are not carried into Needs or the spec.
func TestTheDriverChoosesTheDataSet(t *testing.T) {
	base := Bench{Workload: pgbench.SelectOnly, Threads: []int{10}, Duration: time.Second,
		Tables: 4, TableSize: 100000, RandType: "pareto", Scale: 10}
	pg := base
	pg.Driver = DriverPgbench
	r := NewRun(RunOptions{Bench: pg, Link: link.Condition{Delay: 10 * time.Millisecond}})
	n := r.Needs()
	if n.Data != (DataSet{Driver: DriverPgbench, Workload: pgbench.SelectOnly, Scale: 10}) {
		t.Errorf("pgbench data set %+v", n.Data)
	}
	if _, ok := driverFor(n.Data).(pgbenchDriver); !ok || r.driver.Name() != DriverPgbench {
		t.Errorf("pgbench bench prepares with %T and runs with %T", driverFor(n.Data), r.driver)
	}
	if s := n.Spec; s.Driver != DriverPgbench || s.Scale != 10 || s.Tables != 0 || s.TableSize != 0 {
		t.Errorf("pgbench spec %+v", s)
	}
	if got := n.Data.String(); got != "pgbench scale 10 (1000000 accounts)" {
		t.Errorf("progress names the data set %q", got)
	}

	sb := base
	sb.Workload = "oltp_read_only"
	n = NewRun(RunOptions{Bench: sb}).Needs()
	if n.Data != (DataSet{Driver: DriverSysbench, Workload: "oltp_read_only", Tables: 4, TableSize: 100000}) {
		t.Errorf("sysbench data set %+v", n.Data)
	}
	if _, ok := driverFor(n.Data).(sysbenchDriver); !ok || n.Spec.Driver != DriverSysbench || n.Spec.Scale != 0 {
		t.Errorf("sysbench bench: %T, spec %+v", driverFor(n.Data), n.Spec)
	}
	if (DataSet{}).String() != "0 tables x 0 rows" || driverFor(DataSet{}).Name() != DriverSysbench {
		t.Error("the zero data set is not sysbench's")
	}
}

// pgbench prints no percentile: a point's p50/p95/p99 and maximum come from the histogram
// of its per-transaction log (Totals.Histogram), its mean from the progress lines.
func TestClosedLoopPgbenchPercentilesFromTheLog(t *testing.T) {
	h := stats.NewHistogram([]stats.Bucket{{Ms: stats.BucketOf(40.2), Count: 90}, {Ms: stats.BucketOf(81), Count: 9}, {Ms: stats.BucketOf(160), Count: 1}})
	ld := &Load{Totals: &Totals{TPS: 20, QPS: 140, LatAvgMs: 45, Histogram: &h, LatMaxMs: 161.3}}
	for i := 1; i <= 3; i++ {
		ld.Ticks = append(ld.Ticks, Tick{T: float64(i), TPS: 20, QPS: 140, LatAvgMs: 45, LatStddevMs: 12})
	}
	var p result.Point
	closedLoop(&p, LoadCell{Threads: 1, Duration: 3 * time.Second}, ld, nil, true, result.Cores{Shared: 2}, 1)
	if p.LatP50Ms != h.Percentile(50) || p.LatP95Ms != h.Percentile(95) || p.LatP99Ms != h.Percentile(99) || p.LatMaxMs != 161.3 {
		t.Errorf("percentiles %g/%g/%g max %g, histogram's %g/%g/%g", p.LatP50Ms, p.LatP95Ms, p.LatP99Ms, p.LatMaxMs,
			h.Percentile(50), h.Percentile(95), h.Percentile(99))
	}
	if p.LatP50Ms < 40 || p.LatP50Ms > 41 || p.LatP99Ms < 80 || p.LatAvgMs != 45 {
		t.Errorf("p50 %g p99 %g avg %g: want about 40.2, 81 and the ticks' 45", p.LatP50Ms, p.LatP99Ms, p.LatAvgMs)
	}
}
