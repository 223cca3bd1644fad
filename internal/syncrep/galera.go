package syncrep

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/galera"
	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/study"
	"github.com/wirelab/wirelab/internal/sysbench"
)

// galeraMode is a two-node Galera cluster (galera-4) across the wire: every commit waits
// for certification by the node in the replica host, one round trip. tuned raises the
// send windows (evs.send_window, evs.user_send_window) to galera.TunedSendWindow.
//
// A Galera node is a server of its own, not a replication replica: the study runs the
// Galera modes after every primary/replica mode, stops the Pair's two servers once and
// starts a fresh cluster per Galera mode (galeraStage), with the data set prepared on its
// first node. Apply only checks that the cluster running is the mode's.
type galeraMode struct{ tuned bool }

func (g galeraMode) Name() string      { return g.options(0).Series() }
func (galeraMode) Engine() engine.Kind { return engine.MariaDB }
func (galeraMode) Control() bool       { return false }
func (galeraMode) Waits() bool         { return true }

// options are the cluster's settings, with gcomm timeouts safe up to maxRTT.
func (g galeraMode) options(maxRTT time.Duration) galera.Options {
	if g.tuned {
		return galera.Tuned(maxRTT)
	}
	return galera.Default(maxRTT)
}

// Apply checks that the study started this mode's cluster.
func (g galeraMode) Apply(_ context.Context, t *Target) error {
	if t.Galera == nil {
		return errors.New("no galera cluster is running")
	}
	if s := t.Galera.Options.Series(); s != g.Name() {
		return fmt.Errorf("the galera cluster running is %s, not %s", s, g.Name())
	}
	return nil
}

// State reads both nodes' wsrep status: commits wait for the replica while both nodes
// are Synced members of a two-node primary component.
func (galeraMode) State(ctx context.Context, t *Target) (State, error) {
	if t.Galera == nil {
		return State{}, errors.New("galera state: no galera cluster is running")
	}
	st, err := t.Galera.Stats(ctx)
	if err != nil {
		return State{}, err
	}
	p := st.Primary
	return State{Replica: st.Replica.State, Galera: &st,
		Waiting: p.ClusterSize == 2 && p.ClusterStatus == "Primary" && st.Replica.State == "Synced"}, nil
}

// isGalera says whether m is a Galera mode (it needs a cluster, not the Pair).
func isGalera(m Mode) bool { _, ok := m.(galeraMode); return ok }

// galeraMaxRTT is the largest round trip the wire will have under the sweep: the largest
// --rtts plus twice the jitter, which galera.Start and CheckRTT also count.
func galeraMaxRTT(o Options) time.Duration {
	var m time.Duration
	for _, r := range o.RTTs {
		m = max(m, r)
	}
	return m + 2*o.Link.Jitter
}

// checkGalera refuses, before anything starts, a sweep whose RTT the cluster's gcomm
// timeouts cannot be set for.
func checkGalera(o Options) error {
	for _, m := range o.Modes {
		g, ok := m.(galeraMode)
		if !ok {
			continue
		}
		if err := g.options(galeraMaxRTT(o)).Validate(); err != nil {
			return fmt.Errorf("--rtts %s (with twice the jitter %s): %s cannot run: %w; want RTTs up to %s",
				durations(o.RTTs), o.Link.Jitter, m.Name(), err, galera.MaxRTTLimit)
		}
	}
	return nil
}

// galeraStage makes the cluster of the cell's mode run: the first time, it closes the
// Pair's handles and stops its two servers; a cluster of another mode is closed. The
// new cluster's first node gets the data set, and the Env's servers become the nodes, so
// the driver connects to node 1 and the CPU sampler reads both nodes.
func (s *Study) galeraStage(ctx context.Context, e *study.Env, g galeraMode) error {
	if s.t.Galera != nil && s.t.Galera.Options.Series() == g.Name() {
		return nil
	}
	if len(e.Servers) < 2 {
		return fmt.Errorf("--modes %s: galera needs the server and replica hosts' servers to replace", g.Name())
	}
	starter, canStart := e.Backend.(study.GaleraStarter)
	stopper, canStop := e.Backend.(study.ServerStopper)
	if !canStart || !canStop {
		return fmt.Errorf("--modes %s: galera runs in a namespace lab only, not on --hosts machines", g.Name())
	}
	if err := s.closeGalera(ctx); err != nil {
		return err
	}
	if s.pair != nil {
		s.pair.Close()
		s.pair = nil
		for i, h := range []string{lab.Server, lab.Replica} {
			if i < len(e.Servers) && e.Servers[i] != nil {
				if err := stopper.StopServer(ctx, h, e.Servers[i]); err != nil {
					return fmt.Errorf("stop the replication pair for galera: %w", err)
				}
				e.Servers[i] = nil
			}
		}
	}
	o := g.options(galeraMaxRTT(s.o))
	o.BufferPool = s.o.BufferPool
	e.Progressf("starting galera cluster (%s, max RTT %s) across the wire", g.Name(), o.MaxRTT)
	c, err := starter.StartGalera(ctx, o)
	if err != nil {
		return fmt.Errorf("start %s: %w", g.Name(), err)
	}
	s.t.Galera = c
	e.Servers[0], e.Servers[1] = c.Primary, c.Replica
	conn := c.Primary.Conn()
	d := s.data()
	e.Progressf("preparing %s on galera node 1", d)
	so := study.SysbenchTo(conn, sysbench.Options{Workload: d.Workload, Tables: d.Tables, TableSize: d.TableSize,
		Socket: conn.Socket, Launcher: e.Backend.Launcher(lab.Server)})
	if err := sysbench.Prepare(ctx, so, e.Logger); err != nil {
		return fmt.Errorf("prepare data set on galera node 1: %w", err)
	}
	return nil
}

// closeGalera stops the running cluster, if any, and forgets it.
func (s *Study) closeGalera(ctx context.Context) error {
	if s.t == nil || s.t.Galera == nil {
		return nil
	}
	c := s.t.Galera
	s.t.Galera = nil
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	return c.Close(cctx)
}

// fillGalera records the cluster's flow control over the point: the fraction of it node
// 1 (the writer) was paused, the pause requests node 2 sent and node 1 received.
func fillGalera(ss *result.SyncStats, st0, st1 State) {
	if st0.Galera == nil || st1.Galera == nil {
		return
	}
	w := st1.Galera.Since(*st0.Galera)
	ss.FlowControlPaused = w.Primary.FlowControlPaused
	ss.FlowControlSent = w.Replica.FlowControlSent
	ss.FlowControlRecv = w.Primary.FlowControlRecv
}
