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
// sysbench table, so the checksums of sbtest* never see it.
const HeartbeatTable = "wirelab_heartbeat"

// HeartbeatEvery is how often the source writes the heartbeat and the replica is read.
const HeartbeatEvery = 100 * time.Millisecond

// Dialect is the heartbeat's SQL in one engine's words (placeholders, upsert, types).
// Every statement takes the timestamp, µs since the epoch, as its one argument, except
// Table and Read.
type Dialect struct {
	Table string // creates the table
	Seed  string // inserts or overwrites the one row
	Write string // sets the row's timestamp
	Read  string // reads it
}

// MySQLDialect is the heartbeat on MariaDB (go-sql-driver/mysql: ? placeholders).
var MySQLDialect = Dialect{
	Table: "CREATE TABLE IF NOT EXISTS " + HeartbeatTable + " (id TINYINT UNSIGNED PRIMARY KEY, ts_us BIGINT NOT NULL) ENGINE=InnoDB",
	Seed:  "REPLACE INTO " + HeartbeatTable + " (id, ts_us) VALUES (1, ?)",
	Write: "UPDATE " + HeartbeatTable + " SET ts_us = ? WHERE id = 1",
	Read:  "SELECT ts_us FROM " + HeartbeatTable + " WHERE id = 1",
}

// PostgresDialect is the heartbeat on PostgreSQL (lib/pq: $n placeholders, no REPLACE).
var PostgresDialect = Dialect{
	Table: "CREATE TABLE IF NOT EXISTS " + HeartbeatTable + " (id smallint PRIMARY KEY, ts_us bigint NOT NULL)",
	Seed: "INSERT INTO " + HeartbeatTable + " (id, ts_us) VALUES (1, $1) " +
		"ON CONFLICT (id) DO UPDATE SET ts_us = EXCLUDED.ts_us",
	Write: "UPDATE " + HeartbeatTable + " SET ts_us = $1 WHERE id = 1",
	Read:  "SELECT ts_us FROM " + HeartbeatTable + " WHERE id = 1",
}

// CreateHeartbeat creates the heartbeat table and its one row on the source. It is
// replicated like everything else, so the replica gets it from the source.
func CreateHeartbeat(ctx context.Context, src *sql.DB, d Dialect) error {
	if _, err := src.ExecContext(ctx, d.Table); err != nil {
		return fmt.Errorf("create heartbeat: %w", err)
	}
	if _, err := src.ExecContext(ctx, d.Seed, time.Now().UnixMicro()); err != nil {
		return fmt.Errorf("create heartbeat: %w", err)
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
func StartHeartbeat(ctx context.Context, src *sql.DB, d Dialect, every time.Duration, log *slog.Logger) *Heartbeat {
	ctx, cancel := context.WithCancel(ctx)
	h := &Heartbeat{cancel: cancel, done: make(chan struct{})}
	q := d.Write
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
func StartLagSampler(ctx context.Context, rep *sql.DB, d Dialect, every time.Duration, origin time.Time) *LagSampler {
	if rep == nil { // a dry run's replica: nothing to read
		done := make(chan struct{})
		close(done)
		return &LagSampler{origin: origin, cancel: func() {}, done: done}
	}
	ctx, cancel := context.WithCancel(ctx)
	ls := &LagSampler{origin: origin, cancel: cancel, done: make(chan struct{})}
	q := d.Read
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
