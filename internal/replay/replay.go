package replay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/wirelab/wirelab/internal/querylog"
)

// replayer is one replay in progress: the reader's side (dispatch) and what the sessions
// share.
type replayer struct {
	o        Options
	srv      server
	info     serverInfo
	tcp      bool // connections are TCP: each connect pays the handshake's round trip
	dialect  querylog.Dialect
	clk      *clock
	start    int64 // clock reading of the replay's start
	col      *collector
	budget   *budget
	sessions *sessionWriter
	// ctx ends on an interrupt or a fatal error (fail), stop also at --for: sessions
	// start nothing new once stop is done, and cut what runs once ctx is.
	ctx  context.Context
	fail context.CancelCauseFunc
	stop context.Context
	wg   sync.WaitGroup
	// stoppedAtFor is set by dispatch when --for ended the replay before the log did;
	// stopAt and stopCost are then the clock and the cost when it did, so the time and
	// CPU spent counting the rest of the log are not the replay's.
	stoppedAtFor bool
	stopAt       int64
	stopCost     Cost
}

// Replay replays the log rd onto o.Target in this process, printing ticks, shapes and
// the summary to out as JSON lines (the child's protocol, see Run), and returns the
// summary. It logs in once first (a failure there is the error, nothing replayed). A
// fatal error (a statement longer than the server takes, a bad line without
// SkipBadLines) ends the replay: the summary so far is returned with it.
func Replay(ctx context.Context, o Options, rd querylog.Reader, out io.Writer) (*Summary, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	srv, err := newServer(o.Target)
	if err != nil {
		return nil, err
	}
	return replayWith(ctx, o, srv, rd, out)
}

// replayWith is Replay onto a given server (tests give a fake one).
func replayWith(ctx context.Context, o Options, srv server, rd querylog.Reader, out io.Writer) (*Summary, error) {
	info, err := srv.probe(ctx)
	if err != nil {
		return nil, fmt.Errorf("log in to the server: %w", err)
	}
	sw, err := newSessionWriter(o.SessionsFile)
	if err != nil {
		return nil, err
	}
	r := &replayer{o: o, srv: srv, info: info, tcp: o.Target.Socket == "", dialect: dialectOf(o.Target.Engine), clk: newClock(),
		col: newCollector(), budget: newBudget(o.budget()), sessions: sw}
	r.ctx, r.fail = context.WithCancelCause(ctx)
	defer r.fail(nil)
	var cancelStop context.CancelFunc
	if o.For > 0 {
		r.stop, cancelStop = context.WithTimeout(r.ctx, o.For)
	} else {
		r.stop, cancelStop = context.WithCancel(r.ctx)
	}
	defer cancelStop()
	lines := &lineWriter{w: out}
	r.start = r.clk.now()
	stopTicks := r.tick(lines)
	last, derr := r.dispatch(rd)
	if derr != nil {
		r.fail(derr)
	}
	r.wg.Wait()
	stopTicks()
	sum := r.summary(last)
	sum.BadLines = skipped(rd)
	if err := sw.close(); err != nil && derr == nil {
		derr = err
	}
	if err := lines.summary(sum); err != nil && derr == nil {
		derr = err
	}
	if derr == nil {
		derr = context.Cause(r.ctx)
		if errors.Is(derr, context.Canceled) && ctx.Err() == nil {
			derr = nil // our own cancel at the end
		}
	}
	return sum, derr
}

// summary completes the collector's summary with what only the replayer knows.
func (r *replayer) summary(lastLine int64) *Summary {
	s := r.col.summary()
	s.Engine, s.ServerVersion, s.Speed = string(r.o.Target.Engine), r.info.Version, r.o.Speed.String()
	s.LastLine = lastLine
	end, cost := r.clk.now(), ownCost()
	if r.stoppedAtFor {
		end, cost = r.stopAt, r.stopCost
		cost.MaxRSSBytes = ownCost().MaxRSSBytes
	}
	s.WallS = float64(end-r.start) / 1e9
	switch {
	case context.Cause(r.ctx) != nil && !errors.Is(context.Cause(r.ctx), context.Canceled):
		s.Stopped = context.Cause(r.ctx).Error()
	case r.ctx.Err() != nil:
		s.Stopped = "interrupted"
	case r.stoppedAtFor || errors.Is(r.stop.Err(), context.DeadlineExceeded) && s.NotReplayed > 0:
		s.Stopped = fmt.Sprintf("--for %s", r.o.For)
	}
	s.Cost = cost
	return &s
}

// dispatch reads the log and hands each event to its session's queue, starting a session
// at its first event. It blocks while the budget is spent. Once --for has passed it
// closes every queue and reads the rest of the log only to count what was not replayed.
// It returns the last line read.
func (r *replayer) dispatch(rd querylog.Reader) (int64, error) {
	open := map[string]*session{}
	closeAll := func() {
		for id, s := range open {
			s.q.close()
			delete(open, id)
		}
	}
	defer closeAll()
	var last int64
	for {
		ev, err := r.next(rd)
		if err == io.EOF {
			return last, nil
		}
		if err != nil {
			return last, err
		}
		last = ev.Line
		if r.stop.Err() != nil {
			closeAll()
			return r.countRest(rd, &ev, last)
		}
		s := open[ev.Session]
		if s == nil {
			s = newSession(r, &ev)
			open[ev.Session] = s
			r.wg.Add(1)
			go s.run()
		}
		if !r.budget.take(eventSize(&ev), r.stop.Done()) {
			closeAll()
			return r.countRest(rd, &ev, last)
		}
		s.q.push(ev)
		if ev.Kind == querylog.Quit {
			s.q.close()
			delete(open, ev.Session)
		}
	}
}

// next is the log's next event. A bad line the reader did not skip (it was not told to)
// ends the replay; a reader ends at its first error.
func (r *replayer) next(rd querylog.Reader) (querylog.Event, error) {
	ev, err := rd.Next()
	if err != nil && err != io.EOF {
		return ev, fmt.Errorf("read %s: %w", r.o.Log, err)
	}
	return ev, err
}

// skipper is a reader that skips the lines it cannot read and counts them
// (querylog.Log with SkipBadLines).
type skipper interface{ Skipped() int64 }

// skipped is how many lines rd skipped, 0 for a reader that does not skip.
func skipped(rd querylog.Reader) int64 {
	if s, ok := rd.(skipper); ok {
		return s.Skipped()
	}
	return 0
}

// countRest reads the log to its end after --for, counting its statements as not
// replayed and its sessions that had yet to start; an interrupted replay does not.
func (r *replayer) countRest(rd querylog.Reader, ev *querylog.Event, last int64) (int64, error) {
	if r.ctx.Err() != nil {
		return last, nil
	}
	r.stoppedAtFor, r.stopAt, r.stopCost = true, r.clk.now(), ownCost()
	var statements, sessions int64
	for {
		switch ev.Kind {
		case querylog.Query:
			statements++
		case querylog.Connect:
			if !loginFailed(ev) {
				sessions++
			}
		}
		e, err := r.next(rd)
		if err == io.EOF || r.ctx.Err() != nil {
			break
		}
		if err != nil {
			return last, err
		}
		ev, last = &e, e.Line
	}
	r.col.rest(statements, sessions)
	return last, nil
}

// tick prints a Tick at the end of every second of the replay until the returned
// function is called.
func (r *replayer) tick(out *lineWriter) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		prev := r.start
		for {
			select {
			case <-done:
				return
			case <-t.C:
				now := r.clk.now()
				tk := r.col.tick(float64(now-r.start)/1e9, float64(now-prev)/1e9)
				prev = now
				_ = out.tick(tk) // a parent that stopped reading loses ticks, not the replay
			}
		}
	}()
	return func() { close(done); <-finished }
}
