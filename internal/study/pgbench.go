package study

import (
	"context"
	"errors"
	"time"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/pgbench"
)

// errPgbenchLabOnly: pgbench runs on a backend whose hosts run it (PgbenchHost): the
// namespace lab only (the CLI refuses pgbench on other backends before anything is made).
var errPgbenchLabOnly = errors.New("pgbench runs in the namespace lab only")

// pgbenchDriver loads PostgreSQL with one of pgbench's built-in scripts on pgbench's own
// tables at a scale.
type pgbenchDriver struct{ scale int }

// Name is "pgbench".
func (pgbenchDriver) Name() string { return DriverPgbench }

// Prepare runs pgbench -i at the scale over the server's unix socket directory.
func (d pgbenchDriver) Prepare(ctx context.Context, e *Env, conn engine.Conn, host string) error {
	h, ok := e.Backend.(PgbenchHost)
	if !ok {
		return errPgbenchLabOnly
	}
	o := PgbenchTo(conn, h.PgbenchIn(host, pgbench.Options{Scale: d.scale, Host: conn.Socket, Port: conn.Port}))
	return pgbench.Init(ctx, o, e.Logger)
}

// Run runs the cell's built-in script with the cell's threads as clients (pgbench picks
// its own worker threads), a progress line every second, from the cell's client host.
func (d pgbenchDriver) Run(ctx context.Context, e *Env, c LoadCell, onStart func(pid int)) (*Load, error) {
	h, ok := e.Backend.(PgbenchHost)
	if !ok {
		return nil, errPgbenchLabOnly
	}
	o := PgbenchTo(e.Servers[0].Conn(), h.PgbenchIn(c.ClientHost, pgbench.Options{Builtin: c.Workload, Clients: c.Threads,
		Time: c.Warmup + c.Duration, Progress: 1, Host: c.target(e), Port: c.port(e), OnStart: onStart,
		// Percentiles: pgbench prints none, its per-transaction log has every latency.
		LatencyLog: true, LatencySkip: c.Warmup}))
	if c.Socket != "" {
		o.Host = c.Socket // libpq takes the socket's directory as its host
	}
	if c.TLS {
		o.SSLMode = "require"
	}
	statements := pgbench.Statements(c.Workload)
	ld := &Load{}
	// The progress callback runs on pgbench's reading goroutine, which is done before Run
	// returns: ld needs no lock.
	sum, err := pgbench.Run(ctx, o, func(p pgbench.Progress) {
		if ld.Start.IsZero() {
			ld.Start = clockStart(time.Now(), p.T)
		}
		ld.Ticks = append(ld.Ticks, progressTick(p, statements))
	}, e.Logger)
	if sum != nil {
		ld.Totals = &Totals{TPS: sum.TPS, QPS: sum.TPS * float64(statements), LatAvgMs: sum.LatAvgMs,
			LatStddevMs: sum.LatStddevMs, Errors: sum.Failed}
		if lg := sum.Logged; lg != nil {
			ld.Totals.Histogram, ld.Totals.LatMaxMs = &lg.Histogram, lg.MaxMs
		}
	}
	return ld, err
}

// progressTick is one `progress:` line (-P 1: its counts are per second) as a Tick.
// pgbench counts transactions only; every statement of a built-in script waits for its
// reply, so queries per second are TPS × the script's statements.
func progressTick(p pgbench.Progress, statements int) Tick {
	return Tick{T: p.T, TPS: p.TPS, QPS: p.TPS * float64(statements), LatAvgMs: p.LatAvgMs,
		LatStddevMs: p.LatStddevMs, Errors: float64(p.Failed)}
}
