package study

import (
	"context"
	"fmt"
	"time"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/stats"
)

// Load drivers: the programs a closed-loop cell runs to load the server.
const (
	DriverSysbench = "sysbench"
	DriverPgbench  = "pgbench"
	// DriverNone is a data set the Session does not prepare: the study loads its own in
	// Setup (a replay's dump).
	DriverNone = "none"
)

// Driver is a closed-loop load generator; one file per driver (sysbench.go, pgbench.go),
// picked by name in driverFor. The Session calls Prepare once per lab, before the first
// point; the matrix calls Run once per cell. Neither leaves a process behind: Run's
// client is killed when ctx ends, and both start in the lab's cgroup.
type Driver interface {
	// Name is the driver as results.json records it: DriverSysbench or DriverPgbench.
	Name() string
	// Prepare creates the driver's data set on the server, dropping an old one first, over
	// the server's unix socket from the server's host.
	Prepare(ctx context.Context, e *Env, conn engine.Conn, host string) error
	// Run loads the server for the cell's warm-up + duration with a report every second;
	// onStart gets the client's pid (its CPU is the client's). The Load is returned with
	// what was received also when the run failed.
	Run(ctx context.Context, e *Env, c LoadCell, onStart func(pid int)) (*Load, error)
}

// driverFor is the registry: the driver that prepares and loads d.
func driverFor(d DataSet) Driver {
	if d.Driver == DriverPgbench {
		return pgbenchDriver{scale: d.Scale}
	}
	return sysbenchDriver{data: d}
}

// Tick is one second of a driver's report in the one shape FillSeries takes: each
// driver's own lines (sysbench's interval lines, pgbench's progress lines) are turned
// into it. Rates are per second over the interval that ends at T; a latency the driver
// does not report is 0 (sysbench reports a percentile, pgbench the mean and spread).
type Tick struct {
	T                     float64 // seconds since the load started
	TPS, QPS              float64
	LatP95Ms              float64
	LatAvgMs, LatStddevMs float64
	Errors, Reconnects    float64 // per second
}

// Load is what a driver reports of one run: the per-second ticks as they came and the
// whole-run totals (nil when the run ended without a summary).
type Load struct {
	Ticks  []Tick
	Totals *Totals
	// Start is when the driver's own clock began, the origin of the ticks' T: the arrival
	// of its first per-second line less that line's T (clockStart). The driver starts
	// counting once its clients are connected: 0.02-0.7 s after it was launched here, in
	// `wirelab run` and over SSH (the most with 128 TLS clients). Zero when no line came
	// (or in a replay).
	Start time.Time
}

// clockStart is when a driver's clock began, from a per-second line that ends t seconds
// into it and arrived at now.
func clockStart(now time.Time, t float64) time.Time {
	return now.Add(-time.Duration(t * float64(time.Second)))
}

// Totals are a driver's final summary: the point falls back on them when the run was too
// short for a single per-second line, and takes its error counts from them.
type Totals struct {
	TPS, QPS              float64
	LatAvgMs, LatStddevMs float64
	LatP95Ms              float64
	Errors, Reconnects    int64
	// Histogram is every transaction's latency after the warm-up, from the driver's own
	// histogram (sysbench) or log (pgbench); nil when it has none. LatMaxMs is the exact
	// maximum over the same transactions.
	Histogram *stats.Histogram
	LatMaxMs  float64
}

// DataSet is the data set a closed-loop study's driver prepares once per lab: sysbench's
// Tables × TableSize rows for Workload, or pgbench's tables at Scale.
type DataSet struct {
	Driver            string // DriverSysbench ("" too), DriverPgbench or DriverNone
	Workload          string
	Tables, TableSize int
	Scale             int // pgbench -i -s: 100000 pgbench_accounts rows per unit
}

// String is the data set as the Session's progress line names it.
func (d DataSet) String() string {
	if d.Driver == DriverNone {
		return "no data set"
	}
	if d.Driver == DriverPgbench {
		return fmt.Sprintf("pgbench scale %d (%d accounts)", d.Scale, d.Scale*100_000)
	}
	return fmt.Sprintf("%d tables x %d rows", d.Tables, d.TableSize)
}
