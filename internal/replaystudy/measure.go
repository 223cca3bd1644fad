package replaystudy

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/mariadb"
	"github.com/wirelab/wirelab/internal/replay"
	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/study"
)

// Measure replays the log for one cell on the wire the Session shaped: the data put back
// to its snapshot (every point but the first), the replayer started on the client host
// with the sampler running, then the point filled from its ticks, its summary and, when
// asked, the tables' checksums.
func (s *Study) Measure(ctx context.Context, e *study.Env, cell study.Cell) (result.Point, error) {
	c, ok := cell.(Cell)
	if !ok {
		return result.Point{}, fmt.Errorf("measure: %T is not a replay cell", cell)
	}
	p := e.BasePoint(Name, c.Series.Name())
	p.Compression, p.TLS, p.Transport, p.Channel = c.Series.Compression, c.Series.TLS, "tcp", string(study.ChannelDirect)
	if c.Series.Tunnel {
		p.Channel = string(study.ChannelTunnel)
	}
	p.Workload, p.Driver, p.Threads = filepath.Base(s.o.Log.Path), Driver, int(s.o.Log.Scan.Sessions)
	var resetS float64
	if c.Index > 1 {
		t0 := time.Now()
		if err := s.data.reset(ctx); err != nil {
			return p, err
		}
		resetS = time.Since(t0).Seconds()
	}
	o, err := s.replayOptions(e, c)
	if err != nil {
		return p, err
	}
	sides, onStart := replaySides(e)
	o.OnStart = onStart
	var sum *replay.Summary
	tot, err := study.MeasurePaced(ctx, e, &p, sides, func(ctx context.Context) (*study.Load, time.Duration, error) {
		var ld *study.Load
		var rerr error
		sum, ld, rerr = runReplay(ctx, o)
		if sum == nil {
			return nil, 0, rerr
		}
		return ld, wall(sum), rerr
	})
	if sum == nil {
		if err == nil {
			err = replay.ErrNoSummary
		}
		return p, err
	}
	fillPoint(&p, sum, s.o)
	p.Replay.ResetS = resetS
	p.Replay.WireBytesUp, p.Replay.WireBytesDown = int64(tot.UpBytes), int64(tot.DownBytes)
	if o.SessionsFile != "" {
		p.Replay.SessionsFile = filepath.Base(o.SessionsFile)
	}
	return p, s.complete(ctx, &p, sum, err)
}

// replaySides are whose CPU is whose during a replay: the server (with the tunnel's exit)
// and the replayer, once onStart has its pid (with the tunnel's entry).
func replaySides(e *study.Env) (study.Sides, func(pid int)) {
	var mu sync.Mutex
	var pid int
	srv := e.Servers[0]
	return study.Sides{DriverHost: lab.Client,
			Server: func() []int { return append(srv.Pids(), helperPids(e, "tunnel-exit")...) },
			Client: func() []int {
				mu.Lock()
				defer mu.Unlock()
				pids := helperPids(e, "tunnel-entry")
				if pid != 0 {
					pids = append(pids, pid)
				}
				return pids
			}},
		func(n int) { mu.Lock(); pid = n; mu.Unlock() }
}

// complete records the tables' checksums when asked and says whether the point failed:
// the replay's own error, or no statement replayed.
func (s *Study) complete(ctx context.Context, p *result.Point, sum *replay.Summary, err error) error {
	if s.o.Checksums {
		sums, cerr := s.data.checksums(ctx)
		if cerr != nil {
			return errors.Join(err, fmt.Errorf("checksums after the replay: %w", cerr))
		}
		p.Replay.Checksums = sums
	}
	if err != nil {
		return err
	}
	if sum.Statements == 0 {
		return fmt.Errorf("no statement was replayed: %s", orText(sum.Stopped, "every session failed to connect"))
	}
	return nil
}

func orText(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// runReplay runs the replay and gathers its ticks as the study's load; the summary is nil
// when the replayer printed none.
func runReplay(ctx context.Context, o replay.Options) (*replay.Summary, *study.Load, error) {
	var mu sync.Mutex
	ld := &study.Load{}
	sum, err := replay.Run(ctx, o, func(t replay.Tick) {
		mu.Lock()
		defer mu.Unlock()
		if ld.Start.IsZero() {
			ld.Start = time.Now().Add(-time.Duration(t.T * float64(time.Second)))
		}
		ld.Ticks = append(ld.Ticks, tickOf(t))
	})
	if sum == nil {
		return nil, nil, err
	}
	mu.Lock()
	defer mu.Unlock()
	ld.Totals = totalsOf(sum)
	return sum, ld, err
}

// replayOptions are the replayer's options for cell c: the server (or the tunnel's entry
// for a tunnel series) as the client host reaches it, the series' TLS and compression,
// the pace, and the cell's sessions file in the results directory.
func (s *Study) replayOptions(e *study.Env, c Cell) (replay.Options, error) {
	conn := e.Servers[0].Conn()
	t := replay.Target{Engine: s.o.Engine(), Host: conn.Host, Port: conn.Port, User: conn.User, Password: conn.Password,
		DB: conn.DB, TLS: c.Series.TLS, Compress: c.Series.Compression}
	if c.Series.Tunnel {
		h, port, err := s.tunnelTarget()
		if err != nil {
			return replay.Options{}, err
		}
		t.Host, t.Port = h, port
	} else if t.TLS && conn.Engine == engine.MariaDB && conn.CertDir != "" {
		// The server's certificate names its own address, which the tunnel's entry is not.
		t.CA = filepath.Join(conn.CertDir, mariadb.SysbenchCAFile)
	}
	l := e.Backend.Launcher(lab.Client)
	if !l.Local() {
		return replay.Options{}, fmt.Errorf("replay: the client host does not share this machine's files (the log, the sessions file)")
	}
	o := replay.Options{Log: s.o.Log.Path, Format: s.o.Log.Format, Target: t, Speed: s.o.Speed, For: s.o.For,
		SkipBadLines: s.o.SkipBadLines, Binary: e.Self, Launcher: l, Logger: e.Logger}
	if s.o.OutDir != "" {
		out, err := filepath.Abs(s.o.OutDir)
		if err != nil {
			return o, err
		}
		o.SessionsFile = filepath.Join(out, c.sessionsFile())
	}
	return o, nil
}

// helperPids are the pids of the backend's helpers with these names (the tunnel's ends),
// whose CPU is the side's they run on.
func helperPids(e *study.Env, names ...string) []int {
	if h, ok := e.Backend.(study.HelperLister); ok {
		return h.HelperPids(names...)
	}
	return nil
}
