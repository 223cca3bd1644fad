package study

import (
	"context"
	"time"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/execx"
	"github.com/wirelab/wirelab/internal/hostinfo"
	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/metrics"
	"github.com/wirelab/wirelab/internal/result"
)

// Backend is where a Session measures: the hosts, the wire between them and the
// processes on them. The namespace lab is one (backend_lab.go); package remote is the
// other, the user's own machines over SSH. The Session and the studies that reach the
// machines only through Env's methods (run, bandwidth, transport) measure the same way on
// either and write the same results.json; what only some backends can do (a wire fault,
// a Galera cluster, pgbench) is a capability of its own (capability.go), which a study
// asserts on the Backend.
type Backend interface {
	// ID names the run (results.json's run_id); Describe says in one line what is up.
	ID() string
	Describe() string
	// StartServer starts the database server sv on its host.
	StartServer(ctx context.Context, sv Server) (engine.Server, error)
	// Launcher runs a load driver's commands on host (a lab role: lab.Client, lab.Server).
	Launcher(host string) execx.Launcher
	// Shape puts c on the wire; Wire describes the wire as it is now.
	Shape(ctx context.Context, c link.Condition) error
	Wire() WireState
	// CheckWire measures the wire as shaped (`link check`); ok is false when the backend
	// cannot, and the points then carry no wire check.
	CheckWire(ctx context.Context, c link.Condition, d time.Duration) (wc *result.WireCheck, ok bool, err error)
	// ReadShaping reads every shaped link back through its host and compares it with the
	// plan that shaped it, one link.Reading each: the Session reads it before and after
	// every point, and a point not measured on the wire asked fails (shapingFault). None
	// when there is nothing to read (a dry run's hosts).
	ReadShaping(ctx context.Context) ([]link.Reading, error)
	// Sampler is the per-second wire and CPU sampler of one measurement.
	Sampler(sides Sides) Sampler
	// Dir is a directory of the backend's own on host (a lab role), removed by Down: where
	// a study's helpers keep their sockets and logs; "" when the backend has no such host
	// of its own (an existing server's machine).
	Dir(host string) string
	// Exec runs argv to completion on host and returns its standard output.
	Exec(ctx context.Context, host string, argv ...string) ([]byte, error)
	// StartHelper starts argv on host as a long-running helper of the study (transport's
	// socat hops), output in Dir(host)/name.log; Down stops it.
	StartHelper(ctx context.Context, host, name string, argv []string) error
	// StartTunnel starts `wirelab tunnel` with knobs o: its exit on the server host,
	// forwarding to o.ServerHost (default: the server's own address there) and
	// o.ServerPort, and its entry on entryHost; it returns the entry's host:port as seen
	// from entryHost. The ends stay up until Down. self is this machine's wirelab binary,
	// for a backend that starts the ends from it.
	StartTunnel(ctx context.Context, self, entryHost string, o lab.TunnelOptions) (entry string, err error)
	// Down removes everything the backend made, on every host.
	Down(ctx context.Context) error
}

// HostReporter is a Backend that knows the machines it runs on, each as its own agent
// read it (hostinfo): the report's environment has a row per host and each side's CPU
// verdict weighs that side's own cores. A backend that is not one runs on this machine.
type HostReporter interface {
	Hosts() []result.Host
}

// hostsOf are b's machines: its own account, else this machine shared by both sides.
func hostsOf(b Backend) []result.Host {
	if r, ok := b.(HostReporter); ok {
		if hs := r.Hosts(); len(hs) > 0 {
			return hs
		}
	}
	return []result.Host{hostinfo.Local()}
}

// WireState is the wire as shaped, for the environment of results.json.
type WireState struct {
	Shaper   string // how the condition is made (htb+delayer, htb+netem, ...)
	ReadBack string // the kernel's own account of the qdiscs
	// Directions are the shaped directions of condition c, one per interface.
	Directions func(c link.Condition) []result.LinkDirection
	// DelayerStats is the user-space delay line's stats file; "" when the wire has none.
	DelayerStats string
	// Congestion is the TCP congestion control the hosts' connections use; "" when the
	// backend cannot tell.
	Congestion string
}

// Sampler samples the wire and both sides' CPU between Start and Stop
// (*metrics.Sampler is one).
type Sampler interface {
	Start(ctx context.Context) error
	Stop() []metrics.Sample
	Totals() metrics.Totals
}

// Opener builds the backend a study needs once the machine lock is held; owner is
// the process that holds it, recorded wherever the backend keeps state.
type Opener func(ctx context.Context, needs Needs, owner *lab.Owner) (Backend, error)
