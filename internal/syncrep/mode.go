package syncrep

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/galera"
	"github.com/wirelab/wirelab/internal/replication"
)

// Mode is one way a commit may wait for the replica; one file per family, registered in
// modes. The study calls Apply before the first point of the mode at each RTT (the pair
// replicating and caught up), then State before and after each point. Apply leaves the
// pair in the mode until another mode's Apply; nothing it sets outlives the lab's servers.
type Mode interface {
	// Name is the mode as --modes and Point.Series spell it.
	Name() string
	// Engine is the engine the mode belongs to.
	Engine() engine.Kind
	// Control is true for the engine's mode whose commit waits for no replica: the others
	// are compared with it.
	Control() bool
	// Waits is true when the mode's commits wait for the replica: when its State says
	// they do not, the mode fell back.
	Waits() bool
	// Apply puts the pair in the mode and waits until the primary says it is in effect.
	Apply(ctx context.Context, t *Target) error
	// State is the mode's account of the replica now: whether commits wait for it and,
	// where the engine counts them, how many commits did and did not.
	State(ctx context.Context, t *Target) (State, error)
}

// State is a mode's account of the replica at one moment.
type State struct {
	Replica           string        // "ON"/"OFF" (semi-sync status), "sync"/"async" (sync_state)
	Waiting           bool          // commits wait for the replica now
	SyncedTx, AsyncTx int64         // cumulative counters where the engine keeps them (MariaDB)
	Galera            *galera.Stats // both nodes' wsrep status (Galera modes)
}

// Target is what a Mode works on: the replication Pair and its engine's servers, and the
// study's knobs a mode needs.
type Target struct {
	Pair *replication.Pair
	// SemiSyncTimeout is rpl_semi_sync_master_timeout: how long a commit waits for the
	// replica before semi-sync falls back to asynchronous.
	SemiSyncTimeout time.Duration
	// Galera is the running cluster while the study measures a Galera mode (nil before).
	Galera *galera.Cluster
}

// modes is the explicit registry, in the order --modes lists them by default.
var modes = []Mode{
	async{},
	semiSync{wait: "AFTER_SYNC"},
	semiSync{wait: "AFTER_COMMIT"},
	pgCommit{level: "off"},
	pgCommit{level: "local"},
	pgCommit{level: "remote_write"},
	pgCommit{level: "on"},
	pgCommit{level: "remote_apply"},
	galeraMode{},
	galeraMode{tuned: true},
}

// ErrUnknownMode is returned for a --modes name no engine has.
var ErrUnknownMode = errors.New("unknown mode")

// ModesFor are the engine's modes, in registry order.
func ModesFor(k engine.Kind) []Mode {
	var out []Mode
	for _, m := range modes {
		if m.Engine() == k {
			out = append(out, m)
		}
	}
	return out
}

// Names are the modes' names.
func Names(ms []Mode) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Name()
	}
	return out
}

// ParseModes parses --modes for engine k: each name known, the engine's own, no repeats;
// the control is added first when missing, since every finding compares with it.
func ParseModes(s string, k engine.Kind) ([]Mode, error) {
	own := Names(ModesFor(k))
	form := fmt.Sprintf("a comma-separated subset of %s (--engine %s)", strings.Join(own, ","), k)
	var out []Mode
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		m, ok := lookup(f)
		switch {
		case !ok:
			return nil, fmt.Errorf("--modes %q: %w %q; want %s", s, ErrUnknownMode, f, form)
		case m.Engine() != k:
			return nil, fmt.Errorf("--modes %q: %s is a %s mode, not a %s one; want %s", s, f, m.Engine().Title(), k.Title(), form)
		case slices.ContainsFunc(out, func(o Mode) bool { return o.Name() == f }):
			return nil, fmt.Errorf("--modes %q: %s appears twice; want %s", s, f, form)
		}
		out = append(out, m)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--modes is empty: want %s", form)
	}
	if !slices.ContainsFunc(out, Mode.Control) {
		for _, m := range ModesFor(k) {
			if m.Control() {
				out = append([]Mode{m}, out...)
			}
		}
	}
	return out, nil
}

func lookup(name string) (Mode, bool) {
	for _, m := range modes {
		if m.Name() == name {
			return m, true
		}
	}
	return nil, false
}
