package study

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/procfs"
	"github.com/wirelab/wirelab/internal/result"
)

// Env is what a Study sees of the Session: the machines with their servers, the wire as
// it is, the last link check, the run being written, and progress output.
type Env struct {
	// Backend is where the study runs; what only some backends can do is found by
	// asserting a capability on it (capability.go).
	Backend Backend
	Servers []engine.Server // in Needs().Servers order
	Logger  *slog.Logger
	Self    string      // the wirelab binary (tunnel ends and the delayer run from it)
	Run     *result.Run // spec and notes may be refined in Setup; points belong to the Session
	// Far is the host across the wire from the server (Needs().Hosts[0]).
	Far string
	// Cond is the wire as it is now; WireCheck the last `link check` of it (nil when the
	// study does not check the wire).
	Cond      link.Condition
	WireCheck *result.WireCheck
	// Hosts are the machines the study runs on (HostReporter); Cores their layout, which
	// every CPU verdict and profile of the run uses.
	Hosts []result.Host
	Cores result.Cores
	// Proc is this machine's /proc (Session.Proc): its load average.
	Proc procfs.FS

	checkWire bool
	applied   []string // every wire applied, for the environment
	// drove is the TPS each host's load driver ran in the point being measured, by lab
	// role (set by measureLoad): whose shaped classes must have counted bytes.
	drove    map[string]float64
	progress io.Writer
	started  time.Time
	// publish gets each point's seconds (Session.Metrics); live is the measurement being
	// published, set by sampled while its load runs (the drivers count their lines in it).
	publish Publisher
	live    *liveFeed
	// release undoes, in reverse order, what the session did outside the lab (an existing
	// server's tables), before the lab is removed.
	release []func(context.Context) error
}

// releaseAll runs the release steps, last first, each with a minute to finish.
func (e *Env) releaseAll(ctx context.Context) error {
	var errs []error
	for i := len(e.release) - 1; i >= 0; i-- {
		c, cancel := context.WithTimeout(ctx, time.Minute)
		errs = append(errs, e.release[i](c))
		cancel()
	}
	e.release = nil
	return errors.Join(errs...)
}

// Progressf prints one progress line with the time since the session started; nothing
// on an Env without progress output (one a test builds).
func (e *Env) Progressf(format string, a ...any) {
	if e.progress == nil {
		return
	}
	fmt.Fprintf(e.progress, "[%s] %s\n", time.Since(e.started).Round(time.Second), fmt.Sprintf(format, a...))
}

// Note adds a sentence to the run's notes (results.json and the report).
func (e *Env) Note(format string, a ...any) {
	e.Run.Notes = append(e.Run.Notes, fmt.Sprintf(format, a...))
}

// Shape puts c on the wire (when it differs from the wire now), records it in the
// environment, and runs `link check` when the study asked for it.
func (e *Env) Shape(ctx context.Context, c link.Condition) error {
	if c == e.Cond && e.applied != nil {
		return nil
	}
	if c != e.Cond {
		if err := e.Backend.Shape(ctx, c); err != nil {
			return err
		}
		e.Cond = c
	}
	w := e.Backend.Wire()
	env := &e.Run.Environment
	if s := c.String(); !slices.Contains(e.applied, s) {
		e.applied = append(e.applied, s)
		env.Link = append(env.Link, w.Directions(c)...)
	}
	env.Shaper, env.LinkAsApplied, env.LinkAsReadBack = w.Shaper, strings.Join(e.applied, " | "), w.ReadBack
	e.WireCheck = nil
	if e.checkWire {
		e.WireCheck = e.check(ctx)
	}
	return nil
}

func (e *Env) check(ctx context.Context) *result.WireCheck {
	wc, ok, err := e.Backend.CheckWire(ctx, e.Cond, 3*time.Second)
	if !ok {
		return nil
	}
	if err != nil {
		e.Logger.Warn("link check failed", "err", err)
		return &result.WireCheck{Verdict: "check failed: " + err.Error()}
	}
	return wc
}

// BasePoint is a point with the wire it was measured on filled in.
func (e *Env) BasePoint(study, series string) result.Point {
	c := e.Cond
	return result.Point{Study: study, Series: series, LinkRateBps: c.RateBps,
		LinkDelayMs:  float64(c.Delay) / float64(time.Millisecond),
		LinkJitterMs: float64(c.Jitter) / float64(time.Millisecond), LinkLossPct: c.LossPct,
		WireCheck: e.WireCheck}
}

// helperPids are the pids of the backend's recorded helpers with these names; none on a
// backend that records none (HelperLister).
func (e *Env) helperPids(names ...string) []int {
	if h, ok := e.Backend.(HelperLister); ok {
		return h.HelperPids(names...)
	}
	return nil
}

// loadAverage is the 1-minute load average (0 when unreadable).
func loadAverage(proc procfs.FS) float64 {
	l, err := proc.LoadAvg()
	if err != nil {
		return 0
	}
	return l.One
}
