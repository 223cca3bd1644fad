package syncrep

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/mariadb"
	"github.com/wirelab/wirelab/internal/replication"
)

// semiSync is MariaDB's semi-synchronous replication (built into 10.3+): a commit waits
// until the replica acknowledges it has the transaction in its relay log. wait is
// rpl_semi_sync_master_wait_point: AFTER_SYNC waits after the binlog is synced and before
// the storage engine commits (no other session sees the change before the replica has
// it); AFTER_COMMIT waits after the engine commit, with the change already visible.
type semiSync struct{ wait string }

func (s semiSync) Name() string {
	return "semisync-" + strings.ReplaceAll(strings.ToLower(s.wait), "_", "-")
}
func (semiSync) Engine() engine.Kind { return engine.MariaDB }
func (semiSync) Control() bool       { return false }
func (semiSync) Waits() bool         { return true }

// Apply enables semi-sync with the wait point and the study's timeout on the primary,
// enables it on the replica, reconnects the replica's IO thread and waits until the
// primary counts it as a semi-sync client with semi-sync on.
func (s semiSync) Apply(ctx context.Context, t *Target) error {
	return setSemiSync(ctx, t, true, s.wait, t.SemiSyncTimeout)
}

// State is the primary's semi-sync status and its yes/no transaction counters.
func (semiSync) State(ctx context.Context, t *Target) (State, error) {
	return semiSyncState(ctx, t)
}

// mariadbPair is the pair's two MariaDB servers, in the lab or on real hosts.
func mariadbPair(t *Target) (src, rep *mariadb.Server, err error) {
	s, err1 := replication.MariaDBOf(t.Pair.Source)
	r, err2 := replication.MariaDBOf(t.Pair.Replica)
	if err1 != nil || err2 != nil {
		return nil, nil, fmt.Errorf("a MariaDB mode needs a MariaDB primary and replica: %w", errors.Join(err1, err2))
	}
	return s, r, nil
}

// semiSyncSQL are the statements for the primary and for the replica that turn semi-sync
// on (with wait point and timeout) or off, and restart the replica's IO thread so it
// (re)registers as a semi-sync client or stops being one.
func semiSyncSQL(on bool, wait string, timeout time.Duration) (primary, replica string) {
	if !on {
		return "SET GLOBAL rpl_semi_sync_master_enabled = OFF",
			"SET GLOBAL rpl_semi_sync_slave_enabled = OFF; STOP SLAVE IO_THREAD; START SLAVE IO_THREAD"
	}
	return fmt.Sprintf("SET GLOBAL rpl_semi_sync_master_timeout = %d; SET GLOBAL rpl_semi_sync_master_wait_point = '%s'; "+
			"SET GLOBAL rpl_semi_sync_master_enabled = ON", timeout.Milliseconds(), wait),
		"SET GLOBAL rpl_semi_sync_slave_enabled = ON; STOP SLAVE IO_THREAD; START SLAVE IO_THREAD"
}

// setSemiSync switches semi-sync and waits until the primary sees the replica as it
// should: one semi-sync client with status ON, or none.
func setSemiSync(ctx context.Context, t *Target, on bool, wait string, timeout time.Duration) error {
	src, rep, err := mariadbPair(t)
	if err != nil {
		return err
	}
	ps, rs := semiSyncSQL(on, wait, timeout)
	if _, err := src.Exec(ctx, ps); err != nil {
		return fmt.Errorf("semi-sync on the primary: %w", err)
	}
	if _, err := rep.Exec(ctx, rs); err != nil {
		return fmt.Errorf("semi-sync on the replica: %w", err)
	}
	if t.Pair.Planned {
		return nil // a dry run: the statements are printed; no primary answers
	}
	want := 0
	if on {
		want = 1
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, err := masterStatus(ctx, src)
		if err != nil {
			return err
		}
		clients := st["Rpl_semi_sync_master_clients"]
		if clients == strconv.Itoa(want) && (!on || st["Rpl_semi_sync_master_status"] == "ON") {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("semi-sync %v: the primary shows %s semi-sync client(s), status %s after 30s; want %d",
				on, clients, st["Rpl_semi_sync_master_status"], want)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// masterStatus is SHOW GLOBAL STATUS LIKE 'Rpl_semi_sync_master_%' as name -> value.
func masterStatus(ctx context.Context, src *mariadb.Server) (map[string]string, error) {
	rows, err := src.Rows(ctx, "SHOW GLOBAL STATUS LIKE 'Rpl_semi_sync_master_%'")
	if err != nil {
		return nil, fmt.Errorf("read semi-sync status: %w", err)
	}
	out := map[string]string{}
	for _, r := range rows {
		out[r["Variable_name"]] = r["Value"]
	}
	return out, nil
}

// semiSyncState reads the primary's semi-sync status and counters.
func semiSyncState(ctx context.Context, t *Target) (State, error) {
	src, _, err := mariadbPair(t)
	if err != nil || t.Pair.Planned {
		return State{}, err // a dry run's primary answers nothing
	}
	st, err := masterStatus(ctx, src)
	if err != nil {
		return State{}, err
	}
	return parseSemiSync(st)
}

// parseSemiSync turns the status variables into a State.
func parseSemiSync(st map[string]string) (State, error) {
	var s State
	var err error
	s.Replica = st["Rpl_semi_sync_master_status"]
	if s.Replica == "" {
		return s, fmt.Errorf("read semi-sync status: the primary has no Rpl_semi_sync_master_status")
	}
	s.Waiting = s.Replica == "ON"
	if s.SyncedTx, err = strconv.ParseInt(st["Rpl_semi_sync_master_yes_tx"], 10, 64); err != nil {
		return s, fmt.Errorf("read semi-sync status: Rpl_semi_sync_master_yes_tx: %w", err)
	}
	if s.AsyncTx, err = strconv.ParseInt(st["Rpl_semi_sync_master_no_tx"], 10, 64); err != nil {
		return s, fmt.Errorf("read semi-sync status: Rpl_semi_sync_master_no_tx: %w", err)
	}
	return s, nil
}
