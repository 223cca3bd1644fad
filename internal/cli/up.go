package cli

import (
	"context"
	"fmt"

	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/machinelock"
)

func cmdUp(p *Process, args []string) error {
	fs := newFlagSet(p, "up", "build a lab (client, wire, server hosts) and start MariaDB or PostgreSQL on the server",
		"wirelab up --rate 50mbit --delay 5ms\nwirelab exec client -- sh -c 'mariadb -h $WIRELAB_SERVER_HOST -u $WIRELAB_DB_USER -p$WIRELAB_DB_PASSWORD -e \"select 1\"'\nwirelab up --engine postgres && wirelab exec client -- psql -c 'select 1'\nwirelab down")
	eng := addEngineFlag(fs)
	wf := link.AddFlags(fs)
	replica := fs.Bool("replica", false, "also build a replica host (198.18.2.2) behind the wire")
	noDB := fs.Bool("no-db", false, "do not start a database server (bare hosts and wire)")
	pool := fs.String("buffer-pool", "1G", "the server's data cache: innodb_buffer_pool_size (MariaDB) or shared_buffers (PostgreSQL)")
	congest := addCongestionFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("up: unexpected argument %q", fs.Arg(0))
	}
	cond, shaper, err := wf.Condition()
	if err != nil {
		return &UsageError{err}
	}
	kind, err := eng.kind()
	if err != nil {
		return err
	}
	switch {
	case *noDB && given(fs, "buffer-pool"):
		return usagef("up: --buffer-pool sizes the server, and --no-db starts none: drop one of them")
	case !*noDB:
		if err := lab.CheckBufferPool(*pool); err != nil {
			return &UsageError{err}
		}
	}
	if err := checkCongestion(p, *congest, false); err != nil {
		return &UsageError{err}
	}
	if err := requireRoot(p); err != nil {
		return err
	}
	if h, busy := machinelock.Peek(p.lockDir()); busy {
		fmt.Fprintf(p.Stderr, "note: %s is measuring on this machine; this lab competes with it for the CPUs (its report records that)\n", h)
	}
	hosts := []string{lab.Client, lab.Server}
	if *replica {
		hosts = append(hosts, lab.Replica)
	}
	ctx := context.Background()
	l, err := lab.Up(ctx, lab.Options{Hosts: hosts, Condition: cond, Shaper: shaper, Congestion: *congest,
		StateDir: p.StateDir, Self: p.Self, Runner: p.Runner, Logger: p.Logger, Proc: p.proc()})
	if err != nil {
		return fmt.Errorf("up: %w", err)
	}
	if !*noDB {
		if _, err := l.StartServer(ctx, lab.Server, lab.DBOptions{Engine: kind, BufferPool: *pool}); err != nil {
			return fmt.Errorf("up: %w (lab removed: %v)", err, l.Down(ctx))
		}
	}
	printStatus(p, l.State)
	fmt.Fprintf(p.Stdout, "\nThe lab stays up until 'wirelab down --lab %s'.\n", l.State.RunID)
	return nil
}
