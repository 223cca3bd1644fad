package study

import (
	"context"
	"net"
	"time"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/execx"
	"github.com/wirelab/wirelab/internal/galera"
	"github.com/wirelab/wirelab/internal/pgbench"
)

// The capabilities below are what a Backend may be able to do besides Backend itself.
// The Session and the studies find them by type assertion on Env.Backend (as
// HostReporter), never by asking which backend they have; a study that needs one the
// backend lacks fails with an error naming what it needs. The namespace lab
// (backend_lab.go) has them all; a backend on real hosts has those it can (remote:
// WireDropper).

// WireDropper is a Backend that can make the wire drop every packet to and from a host
// for a while (replication's fault scenario): the lab with a rule on its wire host, real
// hosts with rules on the host across the wire. restore ends the drop; it is idempotent
// and runs also after ctx ended. The backend's Down removes a drop nobody restored.
type WireDropper interface {
	DropWire(ctx context.Context, host string) (restore func() error, err error)
}

// RTTProber is a Backend that can measure TCP echo round trips across the wire, from the
// host across it (Needs().Hosts[0]) to the server host: up to n of them within budget.
type RTTProber interface {
	ProbeRTT(ctx context.Context, n int, budget time.Duration) ([]time.Duration, error)
}

// ServerStopper is a Backend that can stop a server it started in host and forget it
// (its datadir removed), so that another server can start there in the same run.
// Idempotent.
type ServerStopper interface {
	StopServer(ctx context.Context, host string, srv engine.Server) error
}

// GaleraStarter is a Backend that can start a two-node Galera cluster with options o, a
// node in its server host and one in its replica host, across the wire. The cluster's
// Close stops both nodes; the backend's Down removes what is left.
type GaleraStarter interface {
	StartGalera(ctx context.Context, o galera.Options) (*galera.Cluster, error)
}

// PgbenchHost is a Backend whose hosts run pgbench: PgbenchIn returns o set to run in
// host (pgbench is started on this machine, in that host's network namespace and the
// backend's cgroup).
type PgbenchHost interface {
	PgbenchIn(host string, o pgbench.Options) pgbench.Options
}

// OutsideRouter is a Backend whose server host routes the far host's traffic to a server
// outside it (an existing server, lab.Options.Outside): the server's packets cross the
// shaped wire and this machine.
type OutsideRouter interface {
	// DialFrom dials as a connection from host does: across the wire and the route out.
	DialFrom(host string) func(ctx context.Context, network, addr string) (net.Conn, error)
	// OutsideLauncher runs commands on this machine outside the wire, in the backend's
	// cgroup, with their private files in the backend's own directory (removed by Down,
	// also after a kill -9).
	OutsideLauncher() execx.Launcher
	// OutsideLocal says whether the outside server runs on this machine itself.
	OutsideLocal() bool
}

// HelperLister is a Backend that records the helpers it started (StartHelper, the
// tunnel's ends): HelperPids are the pids of those with these names, whose CPU belongs to
// the side they run on.
type HelperLister interface {
	HelperPids(names ...string) []int
}
