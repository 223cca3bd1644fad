package study

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/execx"
	"github.com/wirelab/wirelab/internal/galera"
	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/metrics"
	"github.com/wirelab/wirelab/internal/pgbench"
	"github.com/wirelab/wirelab/internal/result"
)

// labBackend is the namespace lab: hosts are network namespaces on this machine joined
// through a wire host whose interfaces carry the shaping.
type labBackend struct {
	l      *lab.Lab
	self   string
	shaper link.Shaper
	hosts  []string
}

// LabOpener opens a fresh namespace lab for a study's needs: the Session's default.
func (s *Session) LabOpener() Opener {
	return func(ctx context.Context, needs Needs, owner *lab.Owner) (Backend, error) {
		l, err := lab.Up(ctx, lab.Options{Hosts: needs.Hosts, Condition: needs.Condition, Shaper: needs.Shaper,
			Congestion: needs.Congestion, StateDir: s.StateDir, Self: s.Self, Runner: s.Runner, Logger: s.Logger, Owner: owner,
			Outside: outside(needs), Proc: s.Proc})
		if err != nil {
			return nil, err
		}
		return &labBackend{l: l, self: s.Self, shaper: needs.Shaper, hosts: needs.Hosts}, nil
	}
}

// LabBackend is the Backend of lab l that is already up (wirelab binary self), for a
// test that drives a lab of its own.
func LabBackend(l *lab.Lab, self string, hosts ...string) Backend {
	return &labBackend{l: l, self: self, hosts: hosts}
}

func (b *labBackend) ID() string { return b.l.State.RunID }

func (b *labBackend) Describe() string {
	return fmt.Sprintf("lab %s up: %s, wire %s", b.l.State.RunID, strings.Join(b.hosts, " + "), b.l.State.Condition)
}

func (b *labBackend) StartServer(ctx context.Context, sv Server) (engine.Server, error) {
	return b.l.StartServer(ctx, sv.Host, sv.DB)
}

func (b *labBackend) Launcher(host string) execx.Launcher {
	return execx.Local{NS: b.l.State.NS(host), Cgroup: b.l.State.Cgroup, Dir: b.l.State.TempDir}
}

func (b *labBackend) Shape(ctx context.Context, c link.Condition) error {
	return b.l.Shape(ctx, c, b.shaper, b.self)
}

func (b *labBackend) Wire() WireState {
	st := b.l.State
	ws := WireState{Shaper: string(st.Shaper), ReadBack: st.ReadBack, Congestion: b.l.Congestion(),
		Directions: func(c link.Condition) []result.LinkDirection { return link.Directions(c, st.Shaper, st.WireIfaces) }}
	if st.Shaper.Uses(link.ShaperNfqueue) {
		_, _, ws.DelayerStats = link.DelayerFiles(b.l.WireSpec(b.self))
	}
	return ws
}

// CheckWire runs `link check` from the far host to the server host across the wire.
func (b *labBackend) CheckWire(ctx context.Context, c link.Condition, d time.Duration) (*result.WireCheck, bool, error) {
	wc, err := link.Check(ctx, b.l.Runner(), b.checkHosts(), c, link.CheckOptions{Duration: d})
	return wc, true, err
}

// ReadShaping reads the wire host's interfaces back (tc qdisc and class show in its
// namespace) against what the shaper made there, as it read it when it applied
// (link.AppliedTC of the lab's read-back): one reading, the wire, crossed by the far
// host's load. Its shaped classes are the HTB classes of a capped wire; an uncapped one
// has none.
func (b *labBackend) ReadShaping(ctx context.Context) ([]link.Reading, error) {
	want, err := link.AppliedTC(b.l.State.ReadBack)
	if err != nil {
		return nil, fmt.Errorf("the wire as shaped: %w", err)
	}
	got := map[string][]link.TCObject{}
	for _, dev := range link.Devices(want) {
		var all []byte
		gone := false
		for _, what := range [][]string{{"qdisc", "show"}, {"-s", "class", "show"}} {
			out, err := b.l.Exec(ctx, lab.Wire, append(append([]string{"tc"}, what...), "dev", dev)...)
			if gone = err != nil && strings.Contains(err.Error(), "Cannot find device"); gone {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("read back the wire's %s: %w", dev, err)
			}
			all = append(all, out...)
		}
		if gone {
			continue // absent from got: the device is gone
		}
		if got[dev], err = link.ParseTCShow(dev, all); err != nil {
			return nil, err
		}
	}
	r := link.ReadingOf(want, got)
	r.Link, r.Host = "the wire", b.hosts[0]
	return []link.Reading{r}, nil
}

// ProbeRTT implements RTTProber: TCP echoes from the far host's namespace to the server
// host's, across the wire host.
func (b *labBackend) ProbeRTT(ctx context.Context, n int, budget time.Duration) ([]time.Duration, error) {
	return link.NetnsProber{}.RTT(ctx, b.checkHosts(), n, budget)
}

// checkHosts are the two ends of the wire: the far host (Needs().Hosts[0]) and the server.
func (b *labBackend) checkHosts() link.CheckHosts {
	st := b.l.State
	return link.CheckHosts{ClientNS: st.NS(b.hosts[0]), ServerNS: st.NS(lab.Server),
		ServerAddr: lab.HostAddr[lab.Server], WireNS: st.NS(lab.Wire)}
}

// Sampler reads the wire host's interfaces facing the server (up, client -> server) and
// the far host (down, server -> client), and the sides' processes from this machine's
// /proc.
func (b *labBackend) Sampler(sides Sides) Sampler {
	st := b.l.State
	src := metrics.Source{WireNS: st.NS(lab.Wire), UpIface: st.WireIfaces[lab.Server],
		DownIface: st.WireIfaces[b.hosts[0]], ServerPIDs: sides.Server, ClientPIDs: sides.Client}
	return metrics.NewSampler(src, time.Second, b.l.Logger())
}

// Dir is the lab's temp directory: the namespaces share this machine's file system.
func (b *labBackend) Dir(string) string { return b.l.State.TempDir }

func (b *labBackend) Exec(ctx context.Context, host string, argv ...string) ([]byte, error) {
	return b.l.Exec(ctx, host, argv...)
}

// StartHelper is a lab process: in the lab's cgroup and state, logged to TempDir/name.log,
// stopped by teardown and by `wirelab down`.
func (b *labBackend) StartHelper(_ context.Context, host, name string, argv []string) error {
	_, err := b.l.StartProc(host, name, argv, nil)
	return err
}

// StartTunnel runs the ends as lab processes in the server host and entryHost.
func (b *labBackend) StartTunnel(ctx context.Context, self, entryHost string, o lab.TunnelOptions) (string, error) {
	return b.l.StartTunnel(ctx, self, entryHost, o)
}

func (b *labBackend) Down(ctx context.Context) error {
	if err := b.l.Down(ctx); err != nil {
		return fmt.Errorf("tear down lab %s: %w", b.l.State.RunID, err)
	}
	return nil
}

// DropWire implements WireDropper with a rule on the wire host (lab.DropWire).
func (b *labBackend) DropWire(ctx context.Context, host string) (func() error, error) {
	return b.l.DropWire(ctx, host)
}

// StopServer implements ServerStopper: the lab stops the server, removes its directory
// and forgets it in its state.
func (b *labBackend) StopServer(ctx context.Context, host string, srv engine.Server) error {
	return b.l.StopServer(ctx, host, srv)
}

// StartGalera implements GaleraStarter: the nodes are lab servers in the server and
// replica hosts.
func (b *labBackend) StartGalera(ctx context.Context, o galera.Options) (*galera.Cluster, error) {
	return galera.Start(ctx, b.l, o)
}

// PgbenchIn implements PgbenchHost: host's namespace, the lab's cgroup.
func (b *labBackend) PgbenchIn(host string, o pgbench.Options) pgbench.Options {
	o.NS, o.Cgroup = b.l.State.NS(host), b.l.State.Cgroup
	return o
}

// DialFrom implements OutsideRouter: a connection made inside host's namespace.
func (b *labBackend) DialFrom(host string) func(ctx context.Context, network, addr string) (net.Conn, error) {
	ns := b.l.State.NS(host)
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		return link.NetnsProber{}.Dial(ctx, ns, network, addr)
	}
}

// OutsideLauncher implements OutsideRouter: this machine's own namespace, the lab's
// cgroup, private files in the lab's directory (which `wirelab down` removes).
func (b *labBackend) OutsideLauncher() execx.Launcher {
	return execx.Local{Cgroup: b.l.State.Cgroup, Dir: b.l.State.TempDir}
}

// OutsideLocal implements OutsideRouter.
func (b *labBackend) OutsideLocal() bool {
	o := b.l.State.Outside
	return o != nil && o.Local
}

// HelperPids implements HelperLister from the lab's recorded processes.
func (b *labBackend) HelperPids(names ...string) []int {
	var out []int
	for _, p := range b.l.State.Procs {
		if slices.Contains(names, p.Name) {
			out = append(out, p.Pid)
		}
	}
	return out
}

// The lab has every capability (capability.go).
var (
	_ WireDropper   = (*labBackend)(nil)
	_ RTTProber     = (*labBackend)(nil)
	_ ServerStopper = (*labBackend)(nil)
	_ GaleraStarter = (*labBackend)(nil)
	_ PgbenchHost   = (*labBackend)(nil)
	_ OutsideRouter = (*labBackend)(nil)
	_ HelperLister  = (*labBackend)(nil)
)
