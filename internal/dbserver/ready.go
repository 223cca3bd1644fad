package dbserver

import (
	"context"
	"fmt"
	"os"
	"time"
)

// Ready is how WaitReady recognises a started server.
type Ready struct {
	Socket  string                          // probed only once this file exists
	Probe   func(ctx context.Context) error // e.g. SELECT 1 over the socket; nil = ready
	Log     string                          // quoted when the server fails to come up
	Timeout time.Duration
	Every   time.Duration // between probes
	// NotReady is the engine's sentinel, wrapped in the error when the server exits during
	// startup or does not answer in time; the error text carries the tail of Log.
	NotReady error
}

// WaitReady probes until the server answers, p exits, r.Timeout passes or ctx ends
// (then ctx's cause is returned, not r.NotReady).
func (p *Process) WaitReady(parent context.Context, r Ready) error {
	ctx, cancel := context.WithTimeout(parent, r.Timeout)
	defer cancel()
	tick := time.NewTicker(r.Every)
	defer tick.Stop()
	var lastErr error
	for {
		if _, err := os.Stat(r.Socket); err == nil {
			qctx, qcancel := context.WithTimeout(ctx, 10*time.Second)
			lastErr = r.Probe(qctx)
			qcancel()
			if lastErr == nil {
				return nil
			}
		}
		select {
		case <-p.done:
			return fmt.Errorf("%w: %s exited during startup; log %s:\n%s", r.NotReady, p.name, r.Log, TailFile(r.Log, 20))
		case <-ctx.Done():
			if parent.Err() != nil {
				return fmt.Errorf("wait for %s: %w", p.name, context.Cause(parent))
			}
			return fmt.Errorf("%w after %s (last error: %v); log %s:\n%s", r.NotReady, r.Timeout, lastErr, r.Log, TailFile(r.Log, 20))
		case <-tick.C:
		}
	}
}
