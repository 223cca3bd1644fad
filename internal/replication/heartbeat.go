package replication

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// HeartbeatTable lives in the bench database (the bench user may write there) but is not a
// sysbench table, so CHECKSUM TABLE of sbtest* never sees it.
const HeartbeatTable = "wirelab_heartbeat"

// HeartbeatEvery is how often the source writes the heartbeat and the replica is read.
const HeartbeatEvery = 100 * time.Millisecond

// CreateHeartbeat creates the heartbeat table and its one row on the source. It is
// binlogged like everything else, so the replica gets it through replication.
func CreateHeartbeat(ctx context.Context, src *sql.DB) error {
	stmts := []string{
		"CREATE TABLE IF NOT EXISTS " + HeartbeatTable + " (id TINYINT UNSIGNED PRIMARY KEY, ts_us BIGINT NOT NULL) ENGINE=InnoDB",
		fmt.Sprintf("REPLACE INTO %s (id, ts_us) VALUES (1, %d)", HeartbeatTable, time.Now().UnixMicro()),
	}
	for _, s := range stmts {
		if _, err := src.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("create heartbeat: %w", err)
		}
	}
	return nil
}

// Heartbeat writes this process's clock (µs since the epoch) into the heartbeat row every
// period until Stop. The clock is the same one the lag sampler reads, so lag needs no clock
// sync: lag = now − the newest timestamp the replica has applied.
type Heartbeat struct {
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	writes int
	fails  int
	last   error
}

// StartHeartbeat starts the writer; it ends at Stop or when ctx ends.
func StartHeartbeat(ctx context.Context, src *sql.DB, every time.Duration, log *slog.Logger) *Heartbeat {
	ctx, cancel := context.WithCancel(ctx)
	h := &Heartbeat{cancel: cancel, done: make(chan struct{})}
	q := "UPDATE " + HeartbeatTable + " SET ts_us = ? WHERE id = 1"
	go func() {
		defer close(h.done)
		tick(ctx, every, func() bool {
			wctx, wcancel := context.WithTimeout(ctx, 5*time.Second)
			_, err := src.ExecContext(wctx, q, time.Now().UnixMicro())
			wcancel()
			h.mu.Lock()
			if err != nil && ctx.Err() == nil {
				if h.fails == 0 {
					log.Warn("heartbeat write failed", "err", err)
				}
				h.fails++
				h.last = err
			} else if err == nil {
				h.writes++
			}
			h.mu.Unlock()
			return true
		})
	}()
	return h
}

// tick calls fn every period until ctx ends or fn returns false.
func tick(ctx context.Context, every time.Duration, fn func() bool) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if !fn() {
			return
		}
	}
}

// Stop ends the writer and waits for it; it is safe to call twice.
func (h *Heartbeat) Stop() (writes, fails int) {
	h.cancel()
	<-h.done
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.writes, h.fails
}

// LagSampler reads the heartbeat on the replica every period and records lag samples
// relative to its origin (the start of the point).
type LagSampler struct {
	origin time.Time
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	s      []LagSample
	fails  int
}

// StartLagSampler starts reading; it ends at Stop or when ctx ends.
func StartLagSampler(ctx context.Context, rep *sql.DB, every time.Duration, origin time.Time) *LagSampler {
	ctx, cancel := context.WithCancel(ctx)
	ls := &LagSampler{origin: origin, cancel: cancel, done: make(chan struct{})}
	q := "SELECT ts_us FROM " + HeartbeatTable + " WHERE id = 1"
	go func() {
		defer close(ls.done)
		tick(ctx, every, func() bool {
			rctx, rcancel := context.WithTimeout(ctx, 5*time.Second)
			var ts int64
			err := rep.QueryRowContext(rctx, q).Scan(&ts)
			rcancel()
			now := time.Now()
			ls.mu.Lock()
			if err != nil {
				ls.fails++
			} else {
				ls.s = append(ls.s, LagSample{At: now.Sub(ls.origin), Lag: max(0, now.Sub(time.UnixMicro(ts)))})
			}
			ls.mu.Unlock()
			return true
		})
	}()
	return ls
}

// Latest is the most recent sample, if any.
func (ls *LagSampler) Latest() (LagSample, bool) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if len(ls.s) == 0 {
		return LagSample{}, false
	}
	return ls.s[len(ls.s)-1], true
}

// Stop ends sampling and returns the samples and the number of failed reads.
func (ls *LagSampler) Stop() ([]LagSample, int) {
	ls.cancel()
	<-ls.done
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return append([]LagSample(nil), ls.s...), ls.fails
}
