package replaystudy

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/execx"
	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/study"
)

// dataSet is the data every point starts from, on one engine's server: one file per
// engine (data_mariadb.go, data_postgres.go), chosen by newDataSet. Setup calls load once,
// before the first point; each later point calls reset before its replay; checksums after
// any replay; close always (after a failed load too), and it is idempotent.
type dataSet interface {
	// load puts the starting data on the server (the dump; sysbench's tables the Session
	// prepared are there already) and keeps a snapshot of it to reset to.
	load(ctx context.Context) error
	// reset puts the server's data back to the snapshot.
	reset(ctx context.Context) error
	// checksums are every table's checksum, by name.
	checksums(ctx context.Context) ([]result.TableChecksum, error)
	// close releases the connections, and on an existing server drops what the replay
	// made there.
	close(ctx context.Context) error
}

// command is a client program's command line and the environment it needs (a password
// the process list must not show).
type command struct {
	name string
	args []string
	env  []string
}

// runWithFile runs c on launcher l with file as its standard input (in) or output (out),
// through sh, so any path works and nothing is held in memory; the error carries the last
// lines the client printed (the failing statement's line, where the client names it).
func runWithFile(ctx context.Context, l execx.Launcher, c command, file string, out bool) error {
	script := `exec "$@" < "$0"`
	if out {
		script = `exec "$@" > "$0"`
	}
	args := append([]string{"-c", script, file, c.name}, c.args...)
	_, stderr, err := l.Launch(ctx, execx.Streamed{Name: "sh", Args: args, Env: c.env})
	if err != nil {
		return fmt.Errorf("%s: %w: %s", c.name, err, execx.LastLines(stderr, 5, " | "))
	}
	return nil
}

// snapshotFile is where a snapshot the replay writes itself is kept: the backend's own
// directory on the server host, removed with the lab.
func snapshotFile(e *study.Env) (string, error) {
	d := e.Backend.Dir(lab.Server)
	if d == "" {
		return "", fmt.Errorf("keep the data's snapshot: the backend has no directory of its own")
	}
	return filepath.Join(d, "replay-snapshot.sql"), nil
}

// newDataSet is the data set of o on the study's server.
func newDataSet(e *study.Env, o Options) (dataSet, error) {
	switch srv := e.Servers[0].(type) {
	case *engine.MariaDBServer:
		return labMariaDB(e, srv, o.Data)
	case *engine.External:
		return existingMariaDB(e, srv, o.Data)
	case *engine.PostgresServer:
		return labPostgres(e, srv, o.Data)
	}
	return nil, fmt.Errorf("replay onto %T: wirelab replays onto a server the lab starts or an existing MySQL/MariaDB server (--server-dsn)", e.Servers[0])
}
