package syncrep

import (
	"context"

	"github.com/wirelab/wirelab/internal/engine"
)

// async is MariaDB's asynchronous replication, the control: a commit returns once the
// primary's binlog and InnoDB have it; the replica follows when it can.
type async struct{}

func (async) Name() string        { return "async" }
func (async) Engine() engine.Kind { return engine.MariaDB }
func (async) Control() bool       { return true }
func (async) Waits() bool         { return false }

// Apply turns semi-sync off on both servers and reconnects the replica's IO thread, which
// only reads rpl_semi_sync_slave_enabled when it connects.
func (async) Apply(ctx context.Context, t *Target) error {
	return setSemiSync(ctx, t, false, "", 0)
}

// State is the primary's semi-sync counters: they stay still while semi-sync is off.
func (async) State(ctx context.Context, t *Target) (State, error) {
	st, err := semiSyncState(ctx, t)
	st.Waiting = false
	return st, err
}
