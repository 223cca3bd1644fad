package study

import (
	"context"
	"sync"
	"time"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/sysbench"
)

// sysbenchDriver loads the server with a sysbench OLTP script on Tables × TableSize rows.
type sysbenchDriver struct{ data DataSet }

// Name is "sysbench".
func (sysbenchDriver) Name() string { return DriverSysbench }

// Prepare runs sysbench cleanup + prepare over the server's unix socket, on its host
// (PostgreSQL's port names the socket file in its directory).
func (d sysbenchDriver) Prepare(ctx context.Context, e *Env, conn engine.Conn, host string) error {
	o := SysbenchTo(conn, sysbench.Options{Workload: d.data.Workload, Tables: d.data.Tables,
		TableSize: d.data.TableSize, Socket: conn.Socket, Port: conn.Port, Launcher: e.Backend.Launcher(host)})
	return sysbench.Prepare(ctx, o, e.Logger)
}

// Run runs the cell's workload with the data set's tables, from the cell's client host.
func (d sysbenchDriver) Run(ctx context.Context, e *Env, c LoadCell, onStart func(pid int)) (*Load, error) {
	_, existing := e.Servers[0].(*engine.External)
	o := SysbenchTo(e.Servers[0].Conn(), sysbench.Options{
		Workload: c.Workload, Tables: d.data.Tables, TableSize: d.data.TableSize, Threads: c.Threads,
		Time: c.Warmup + c.Duration, RandType: c.RandType, Host: c.target(e), Port: c.port(e),
		Socket: c.Socket, TLS: c.TLS, Compression: c.Compression, Extra: c.Extra,
		Launcher: e.Backend.Launcher(c.ClientHost),
		// The histogram of the measured seconds only: sysbench resets it after the warm-up.
		Histogram: true, ResetAfter: c.Warmup,
		// An existing server's password is a real one: in a private file, not on the
		// command line (a server wirelab starts has a throw-away one).
		HidePassword: existing,
	})
	sb, err := RunSysbench(ctx, o, onStart, e)
	return sb.Load(), err
}

// Sysbench is one sysbench run's output: the per-second lines in order and the summary.
type Sysbench struct {
	mu        sync.Mutex
	intervals []sysbench.Interval
	start     time.Time // when sysbench's clock began (Load.Start)
	Summary   *sysbench.Summary
}

// RunSysbench runs sysbench with per-second reports. onStart, when set, gets sysbench's
// pid (its CPU is the client's).
func RunSysbench(ctx context.Context, o sysbench.Options, onStart func(pid int), e *Env) (*Sysbench, error) {
	sb := &Sysbench{}
	o.ReportInterval = 1
	o.OnStart = onStart
	live := e.live.driver()
	sum, err := sysbench.Run(ctx, o, func(iv sysbench.Interval) {
		sb.mu.Lock()
		if sb.start.IsZero() {
			sb.start = clockStart(time.Now(), iv.T)
		}
		sb.intervals = append(sb.intervals, iv)
		sb.mu.Unlock()
		live.tick(intervalTick(iv))
	}, e.Logger)
	sb.Summary = sum
	if sum != nil {
		live.latency(sum.Histogram)
	}
	return sb, err
}

// Intervals returns the per-second lines received so far.
func (s *Sysbench) Intervals() []sysbench.Interval {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]sysbench.Interval(nil), s.intervals...)
}

// NewSysbench is a finished run's output, for tests and replays.
func NewSysbench(ivs []sysbench.Interval, sum *sysbench.Summary) *Sysbench {
	return &Sysbench{intervals: ivs, Summary: sum}
}

// started is when sysbench's clock began; zero before its first per-second line.
func (s *Sysbench) started() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.start
}

// Ticks are the per-second lines received so far, as FillSeries takes them.
func (s *Sysbench) Ticks() []Tick {
	ivs := s.Intervals()
	out := make([]Tick, len(ivs))
	for i, iv := range ivs {
		out[i] = intervalTick(iv)
	}
	return out
}

// intervalTick is one per-second line as a Tick.
func intervalTick(iv sysbench.Interval) Tick {
	return Tick{T: iv.T, TPS: iv.TPS, QPS: iv.QPS, LatP95Ms: iv.LatPct, Errors: iv.Errors, Reconnects: iv.Reconnects}
}

// Load is the run as the closed loop reads it: its ticks and, when sysbench printed one,
// its summary.
func (s *Sysbench) Load() *Load {
	ld := &Load{Ticks: s.Ticks(), Start: s.started()}
	if sum := s.Summary; sum != nil {
		ld.Totals = &Totals{TPS: sum.TPS, QPS: sum.QPS, LatAvgMs: sum.LatAvg, LatP95Ms: sum.LatPct,
			Errors: sum.Errors, Reconnects: sum.Reconnects, Histogram: sum.Histogram, LatMaxMs: sum.LatMax}
	}
	return ld
}
