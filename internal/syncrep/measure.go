package syncrep

import (
	"context"
	"fmt"
	"time"

	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/study"
)

// Measure runs one point: the cell's mode applied when the pair is not in it on this
// wire, the replica caught up, the load from beside the primary with the wire and both
// sides' CPU sampled, the mode's state read before and after, then the catch-up and the
// checksums. A point whose replica did not catch up or whose tables differ is Failed.
func (s *Study) Measure(ctx context.Context, e *study.Env, c study.Cell) (result.Point, error) {
	sc, ok := c.(cell)
	if !ok {
		return result.Point{}, fmt.Errorf("measure: %T is not a sync point", c)
	}
	s.rtt.Measure(ctx, e, "primary")
	m := sc.mode
	base := e.BasePoint(Name, m.Name())
	base.Sync = &result.SyncStats{Mode: m.Name(), Control: m.Control(), RTTMs: ms(sc.rtt), RTTMeasuredMs: s.rtt.Ms}
	g, galeraCell := m.(galeraMode)
	if galeraCell {
		if err := s.galeraStage(ctx, e, g); err != nil {
			return base, err
		}
		if err := s.t.Galera.CheckRTT(e.Cond.RTT() + 2*e.Cond.Jitter); err != nil {
			return base, fmt.Errorf("%s: %w", m.Name(), err)
		}
	}
	if key := m.Name() + "@" + e.Cond.String(); s.applied != key {
		if err := s.catchUp(ctx); err != nil {
			return base, fmt.Errorf("catch up before %s: %w", m.Name(), err)
		}
		if err := m.Apply(ctx, s.t); err != nil {
			return base, fmt.Errorf("apply mode %s: %w", m.Name(), err)
		}
		s.applied = key
	}
	if err := s.catchUp(ctx); err != nil {
		return base, fmt.Errorf("catch up before the point: %w", err)
	}
	st0, err := m.State(ctx, s.t)
	if err != nil {
		return base, err
	}
	lc := sc.LoadCell
	// The port names PostgreSQL's socket file in its socket directory.
	conn := e.Servers[0].Conn()
	lc.Socket, lc.Port = conn.Socket, conn.Port
	primary := e.Servers[0]
	p, err := study.MeasureLoad(ctx, e, s.data(), lc, func(client func() int) study.Sides {
		return study.Sides{
			Server: func() []int {
				pids := primary.Pids()
				if pid := client(); pid != 0 {
					pids = append(pids, pid)
				}
				return pids
			},
			Client: func() []int {
				if s.t.Galera != nil {
					return s.t.Galera.Replica.Pids()
				}
				if s.pair == nil || s.pair.Replica == nil {
					return nil
				}
				return s.pair.Replica.Pids()
			},
		}
	})
	p.Sync = base.Sync
	if err != nil {
		return p, err
	}
	st1, err := m.State(ctx, s.t)
	if err != nil {
		return p, err
	}
	fillSync(p.Sync, p, m, st0, st1)
	if p.Bottleneck == "client-cpu" {
		// The sampler's client side is the replica here, not the driver.
		p.Bottleneck = "replica-cpu"
	}
	if galeraCell {
		// Verify waits for node 2 to apply everything node 1 committed, then compares.
		if _, err := s.t.Galera.Verify(ctx); err != nil {
			p.Failed, p.FailReason = true, err.Error()
			return p, nil
		}
	} else {
		if _, err := s.rep.CatchUp(ctx, s.o.CatchUpTimeout); err != nil {
			p.Failed, p.FailReason = true, "replica did not catch up: "+err.Error()
			return p, nil
		}
		if err := s.rep.Verify(ctx); err != nil {
			p.Failed, p.FailReason = true, err.Error()
			return p, nil
		}
	}
	p.Sync.ChecksumOK = true
	s.progress(e, p)
	return p, nil
}

// fillSync fills the point's sync figures from the point and the mode's state before
// (st0) and after (st1) the load.
func fillSync(ss *result.SyncStats, p result.Point, m Mode, st0, st1 State) {
	ss.SetCommit(p)
	if p.TPS > 0 {
		ss.WireBytesPerTxn = (p.WireBytesPerSUp + p.WireBytesPerSDown) / p.TPS
	}
	ss.Replica = st1.Replica
	ss.SyncedTx, ss.AsyncTx = st1.SyncedTx-st0.SyncedTx, st1.AsyncTx-st0.AsyncTx
	ss.FellBack = m.Waits() && (!st0.Waiting || !st1.Waiting || ss.AsyncTx > 0)
	fillGalera(ss, st0, st1)
}

// catchUp waits for the Pair's replica; a Galera node needs none before a point (its
// commits are certified by both nodes).
func (s *Study) catchUp(ctx context.Context) error {
	if s.t.Galera != nil {
		return nil
	}
	_, err := s.rep.CatchUp(ctx, s.o.CatchUpTimeout)
	return err
}

// progress prints the point's figures on one line.
func (s *Study) progress(e *study.Env, p result.Point) {
	ss := p.Sync
	fell := ""
	if ss.FellBack {
		fell = fmt.Sprintf("  FELL BACK (replica %s, %d commits without it)", ss.Replica, ss.AsyncTx)
	}
	if isGalera(s.cellMode(p.Series)) {
		fell += fmt.Sprintf("  flow control paused %.1f%% (%d sent, %d received)", 100*ss.FlowControlPaused, ss.FlowControlSent, ss.FlowControlRecv)
	}
	e.Progressf("  %-22s rtt %5.1f ms  threads %3d  %8.1f tps  commit p50 %7.2f p95 %7.2f p99 %7.2f ms  wire %.0f B/txn%s",
		p.Series, ss.RTTMs, p.Threads, p.TPS, ss.CommitP50Ms, ss.CommitP95Ms, ss.CommitP99Ms, ss.WireBytesPerTxn, fell)
}

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// cellMode is the study's mode named series (nil when none is).
func (s *Study) cellMode(series string) Mode {
	for _, m := range s.o.Modes {
		if m.Name() == series {
			return m
		}
	}
	return nil
}
