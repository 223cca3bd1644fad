package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/wirelab/wirelab/internal/execx"
)

// Run replays o's log from a child process (`wirelab __replay`, o.Binary) that
// o.Launcher starts on the client host, calls onTick (may be nil) with each second as
// the child prints it, and returns the child's summary. The password reaches the child
// in a private file, never on its command line. onTick runs on the reading goroutine:
// it must return quickly.
//
// When the child fails after it began (a fatal error of the replay), the summary it
// printed is returned with the error; when ctx ends, the child is killed.
func Run(ctx context.Context, o Options, onTick func(Tick)) (*Summary, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if o.Binary == "" {
		return nil, fmt.Errorf("%w: no wirelab binary to run the replay with", ErrBadOptions)
	}
	l := o.Launcher
	if l == nil {
		l = execx.Local{}
	}
	pwFile := ""
	if o.Target.Password != "" {
		path, remove, err := l.TempFile(ctx, []byte(o.Target.Password))
		if err != nil {
			return nil, fmt.Errorf("replay: password file: %w", err)
		}
		defer remove()
		pwFile = path
	}
	d := &decoder{onTick: onTick}
	_, stderr, err := l.Launch(ctx, execx.Streamed{Name: o.Binary, Args: o.Args(pwFile),
		OnStart: o.OnStart, OnStdout: d.line})
	sum, derr := d.result()
	switch {
	case ctx.Err() != nil:
		return sum, fmt.Errorf("replay: %w", context.Cause(ctx))
	case err != nil:
		return sum, fmt.Errorf("replay: %w: %s", err, execx.LastLines(stderr, 5, " | "))
	case derr != nil:
		return sum, fmt.Errorf("replay: %w", derr)
	}
	return sum, nil
}

// decoder reads the child's lines: ticks as they come, then the shapes and the summary.
type decoder struct {
	onTick func(Tick)
	mu     sync.Mutex
	shapes []ShapeStat
	sum    *Summary
	err    error
}

// line decodes one line of the child's standard output.
func (d *decoder) line(s string) {
	var l line
	if err := json.Unmarshal([]byte(s), &l); err != nil {
		d.mu.Lock()
		if d.err == nil {
			d.err = fmt.Errorf("the replayer printed %q: %w", start(s), err)
		}
		d.mu.Unlock()
		return
	}
	switch {
	case l.Tick != nil:
		if d.onTick != nil {
			d.onTick(*l.Tick)
		}
	case l.Shape != nil:
		d.mu.Lock()
		d.shapes = append(d.shapes, *l.Shape)
		d.mu.Unlock()
	case l.Summary != nil:
		d.mu.Lock()
		d.sum = l.Summary
		d.mu.Unlock()
	}
}

// ErrNoSummary means the child ended without printing its summary.
var ErrNoSummary = errors.New("the replayer printed no summary")

// result is the summary with its shapes, or why there is none.
func (d *decoder) result() (*Summary, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.sum == nil {
		if d.err != nil {
			return nil, d.err
		}
		return nil, ErrNoSummary
	}
	d.sum.Shapes = d.shapes
	return d.sum, d.err
}
