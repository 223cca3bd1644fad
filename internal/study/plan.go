package study

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/pgbench"
	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/sysbench"
)

// Plan walks st on a backend whose hosts print what they would run instead of running it
// (a dry run): the data set's preparation on the first server, the study's Setup (its
// helpers), then for every point its wire, its samplers and its load driver on the host
// the point runs it on, and the study's Teardown. servers stand in for the ones the
// backend would start, in Needs().Servers order. The caller removes the backend. What the
// plan cannot show is said on notes, one "# " line each.
//
// Nothing answers on such hosts, so a load driver finds no summary in its (empty) output:
// that is the one error Plan expects of a point, and of a Setup that measures (bandwidth's
// calibration), which then ends there; any other ends the plan.
func Plan(ctx context.Context, b Backend, st Study, servers []engine.Server, notes io.Writer) error {
	needs := st.Needs()
	if len(needs.Servers) == 0 || len(servers) != len(needs.Servers) || len(needs.Hosts) == 0 {
		return fmt.Errorf("plan %s: want a host and %d servers, got %d", st.Name(), len(needs.Servers), len(servers))
	}
	e := &Env{Backend: b, Servers: servers, Logger: slog.New(slog.DiscardHandler), Far: needs.Hosts[0],
		Cond: needs.Condition, Run: &result.Run{Study: st.Name(), Spec: needs.Spec}, progress: io.Discard,
		started: time.Now(), Hosts: hostsOf(b)}
	e.Cores = result.HostCores(e.Hosts)
	defer st.Teardown()
	prepare := func() error { return driverFor(needs.Data).Prepare(ctx, e, servers[0].Conn(), needs.Servers[0].Host) }
	if x := needs.Servers[0].Existing; x != nil {
		fmt.Fprintf(notes, "# existing server %s: wirelab logs in to it from this machine, refuses it if %s already has sysbench's tables, and drops the tables it created when the run ends\n",
			x.DSN(), x.DSN().DB)
		prepare = func() error { return prepareExisting(ctx, e, x, needs.Data) }
	}
	if needs.Data.Driver == DriverNone {
		prepare = func() error { return nil } // the study's Setup loads its own
	}
	if err := prepare(); err != nil {
		return fmt.Errorf("plan the data set: %w", err)
	}
	if err := st.Setup(ctx, e); err != nil {
		if !noSummary(err) {
			return err
		}
		fmt.Fprintf(notes, "# %s's setup measures (%v): a dry run cannot, so the points below are planned with the settings given, not with what that measurement would choose\n", st.Name(), err)
	}
	for {
		c, ok := st.Next(e.Run.Points)
		if !ok {
			return nil
		}
		if err := e.shapeFor(ctx, c); err != nil {
			return err
		}
		p, err := st.Measure(ctx, e, c)
		if err != nil && !noSummary(err) {
			return fmt.Errorf("plan %s: %w", c.Label(), err)
		}
		e.Run.Points = append(e.Run.Points, p)
	}
}

// noSummary says whether err is a load driver finding no summary in its output: what a
// driver run on a host that prints instead of running gets.
func noSummary(err error) bool {
	return errors.Is(err, sysbench.ErrNoSummary) || errors.Is(err, pgbench.ErrNoSummary)
}
