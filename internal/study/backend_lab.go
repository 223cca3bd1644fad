package study

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/execx"
	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/metrics"
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

func (b *labBackend) Lab() *lab.Lab { return b.l }

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
