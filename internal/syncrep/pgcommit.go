package syncrep

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/lib/pq"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/postgres"
)

// pgCommit is one PostgreSQL synchronous_commit level with the standby named in
// synchronous_standby_names: off (not even the local WAL flush is waited for), local (the
// local flush only), remote_write (the standby has written the WAL), on (the standby has
// flushed it), remote_apply (the standby has replayed it, so reads there see the commit).
type pgCommit struct{ level string }

func (c pgCommit) Name() string      { return "pg-" + strings.ReplaceAll(c.level, "_", "-") }
func (pgCommit) Engine() engine.Kind { return engine.Postgres }

// Control: local waits for the primary's own WAL flush and no standby, which is what
// MariaDB's asynchronous commit waits for.
func (c pgCommit) Control() bool { return c.level == "local" }

// Waits: off and local do not wait for the standby; the other levels do.
func (c pgCommit) Waits() bool { return c.level != "off" && c.level != "local" }

// pgCommitSQL are the statements, each in its own transaction (ALTER SYSTEM cannot run in
// one), that name the standby synchronous, set the level and reload the configuration.
func pgCommitSQL(level string) []string {
	return []string{
		"ALTER SYSTEM SET synchronous_standby_names = " + pq.QuoteLiteral(pq.QuoteIdentifier(postgres.StandbyName)),
		"ALTER SYSTEM SET synchronous_commit = " + pq.QuoteLiteral(level),
		"SELECT pg_reload_conf()",
	}
}

// Apply sets the level server-wide (the driver's new sessions take it) and waits until a
// new session sees it and the standby is the synchronous one.
func (c pgCommit) Apply(ctx context.Context, t *Target) error {
	src, ok := t.Pair.Source.(*engine.PostgresServer)
	if !ok {
		return fmt.Errorf("%s needs a PostgreSQL primary", c.Name())
	}
	if _, err := src.Exec(ctx, pgCommitSQL(c.level)...); err != nil {
		return fmt.Errorf("set synchronous_commit=%s: %w", c.level, err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		level, err := src.Exec(ctx, "SHOW synchronous_commit")
		if err != nil {
			return fmt.Errorf("read synchronous_commit: %w", err)
		}
		st, err := c.State(ctx, t)
		if err != nil {
			return err
		}
		if strings.TrimSpace(level) == c.level && st.Replica == "sync" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("set synchronous_commit=%s: after 30s a new session sees %q and the standby is %q, want %s and sync",
				c.level, strings.TrimSpace(level), st.Replica, c.level)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// State is the standby's sync_state in pg_stat_replication ("none" when it is not
// connected); commits wait for it when the level asks and it is "sync".
func (c pgCommit) State(ctx context.Context, t *Target) (State, error) {
	src, ok := t.Pair.Source.(*engine.PostgresServer)
	if !ok {
		return State{}, fmt.Errorf("%s needs a PostgreSQL primary", c.Name())
	}
	out, err := src.Exec(ctx, "SELECT COALESCE((SELECT sync_state FROM pg_stat_replication WHERE application_name = "+
		pq.QuoteLiteral(postgres.StandbyName)+" LIMIT 1), 'none')")
	if err != nil {
		return State{}, fmt.Errorf("read the standby's sync_state: %w", err)
	}
	s := State{Replica: strings.TrimSpace(out)}
	s.Waiting = c.Waits() && s.Replica == "sync"
	return s, nil
}
