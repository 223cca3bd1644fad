package study

import (
	"context"
	"fmt"
	"strings"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/metrics"
	"github.com/wirelab/wirelab/internal/sysbench"
)

// outside is where the lab's server host routes to when the study measures an existing
// server; nil when the lab starts its own.
func outside(needs Needs) *lab.Target {
	if len(needs.Servers) == 0 || needs.Servers[0].Existing == nil {
		return nil
	}
	c := needs.Servers[0].Existing.Conn()
	return &lab.Target{Addr: c.Host, Port: c.Port}
}

// existing readies an existing server for the study. On a backend that routes to it (the
// lab: OutsideRouter), first a login from the client host: it proves the route there and
// back (across the wire, through the server host and this machine) and that the server
// lets the client's address in, before a point fails on it. Then the data set
// (prepareExisting), unless the study loads its own (DriverNone). The CLI refused a
// database that already had these tables, so the ones dropped when the session ends
// (release) are wirelab's own.
func (s *Session) existing(ctx context.Context, e *Env, x *engine.External, d DataSet) error {
	e.release = append(e.release, x.Stop) // wirelab's connection; the server stays up
	router, routed := e.Backend.(OutsideRouter)
	if routed {
		e.Progressf("existing server %s (%s): logging in from the client host through the wire", x.DSN(), x.Version())
		if err := x.PingVia(ctx, router.DialFrom(lab.Client)); err != nil {
			return fmt.Errorf("from the lab's client host %s (through the wire and this machine): %w", lab.HostAddr[lab.Client], err)
		}
	}
	if d.Driver == DriverNone {
		return nil // the study loads and removes its own data (Setup, Teardown)
	}
	tables := sysbench.TableNames(d.Tables)
	// Registered before prepare: a prepare that fails half-way leaves tables too.
	e.release = append(e.release, func(ctx context.Context) error { return x.DropTables(ctx, tables) })
	if err := prepareExisting(ctx, e, x, d); err != nil {
		return err
	}
	if routed {
		e.Note("%s", existingNote(x, router.OutsideLocal(), tables))
	} else {
		e.Note("%s", existingHostsNote(x, tables))
	}
	return nil
}

// prepareExisting creates the data set's tables on an existing server with sysbench over
// TCP, its password in a private file, never on a command line. On a backend that routes
// to it (the lab: OutsideRouter) it runs from this machine outside the wire, so a slow
// link does not slow it; on other hosts from the client host, across the wire, as that
// host is the one that reaches the server.
func prepareExisting(ctx context.Context, e *Env, x *engine.External, d DataSet) error {
	c := x.Conn()
	o := sysbench.Options{Workload: d.Workload, Tables: d.Tables, TableSize: d.TableSize, Host: c.Host, Port: c.Port, HidePassword: true}
	from := "from this machine outside the wire"
	if router, ok := e.Backend.(OutsideRouter); ok {
		o.Launcher = router.OutsideLauncher()
	} else {
		o.Launcher, from = e.Backend.Launcher(lab.Client), "from the client host, across the wire"
	}
	e.Progressf("preparing %d tables x %d rows in %s on %s, %s", d.Tables, d.TableSize, c.DB, x.DSN().Addr(), from)
	if err := sysbench.Prepare(ctx, SysbenchTo(c, o), e.Logger); err != nil {
		return fmt.Errorf("prepare data set on %s: %w", x.DSN(), err)
	}
	return nil
}

// existingHostsNote is existingNote for an existing server measured from real hosts.
func existingHostsNote(x *engine.External, tables []string) string {
	return fmt.Sprintf("Existing server %s (%s): not started by wirelab, and its host is not logged in to. The client host's sysbench reaches it across the client's shaped NIC, "+
		"so wire bytes and utilisation mean what they mean with a server wirelab starts. "+
		"The server's CPU is not measured: a point whose link and client are not saturated is %q, not \"latency\", "+
		"the machine CPU the verdict weighs is the client host's, and points carry no per-transaction profile (wirelab predict needs the server's CPU). "+
		"wirelab created %s in %s (prepared from the client host, across the wire) and drops what it created when the run ends.",
		x.DSN(), x.Version(), metrics.LatencyOrServer, strings.Join(tables, ", "), x.DSN().DB)
}

// existingNote says in the report what wirelab could and could not measure on an existing
// server routed to from the lab (on this machine itself when local), and what it did there.
func existingNote(x *engine.External, local bool, tables []string) string {
	where := "another machine, reached through this one (forwarding and masquerading the lab's client)"
	cpu := "the machine's CPU does not include it"
	if local {
		where, cpu = "this machine", "the machine's CPU includes it"
	}
	return fmt.Sprintf("Existing server %s (%s) on %s: not started by wirelab. The client's traffic crosses the shaped wire to the server host, "+
		"which routes it to the server, so wire bytes, utilisation and the link check mean what they mean with a lab server. "+
		"The server's CPU is not measured (%s): a point whose link and client are not saturated is %q, not \"latency\", "+
		"and points carry no per-transaction profile (wirelab predict needs the server's CPU). "+
		"wirelab created %s in %s (prepared from this machine, outside the wire) and drops what it created when the run ends.",
		x.DSN(), x.Version(), where, cpu, metrics.LatencyOrServer, strings.Join(tables, ", "), x.DSN().DB)
}
