package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/wirelab/wirelab/internal/mariadb"
	"github.com/wirelab/wirelab/internal/remote"
)

// cmdAgentMariaDB runs a MariaDB server on the host it runs on, for a study driven from
// another machine (remote.StartMariaDB starts it): it starts the server in --dir, reports
// it in --dir/server.json, and stops it on SIGTERM or SIGINT, or once --for has passed
// (wirelab was killed and never stopped it).
func cmdAgentMariaDB(p *Process, args []string) error {
	fs := newFlagSet(p, "agent mariadb", "internal: run a MariaDB server on this host for a study driven from another one",
		"wirelab agent mariadb --dir /tmp/wirelab-x/mariadb --bind 198.18.0.2 --for 4h")
	dir := fs.String("dir", "", "the server's directory (datadir, socket, certificates, logs, server.json); created if missing")
	bind := fs.String("bind", "", "the address clients dial: mariadbd's bind-address (a comma-separated list for more)")
	port := fs.Int("port", mariadb.DefaultPort, "TCP port")
	bufferPool := fs.String("buffer-pool", mariadb.DefaultBufferPool, "innodb_buffer_pool_size")
	lifetime := fs.Duration("for", remote.DefaultFor, "stop the server and exit after this long, if nothing stopped it before")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if !filepath.IsAbs(*dir) || *bind == "" || *lifetime <= 0 {
		return usagef("agent mariadb: --dir (an absolute path), --bind and a positive --for are required")
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return fmt.Errorf("agent mariadb: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-p.Interrupts: // SIGTERM from remote.MariaDB.Stop: stop the server, exit
			cancel()
		case <-ctx.Done():
		}
	}()
	log := p.Logger.With("component", "agent-mariadb")
	srv, err := mariadb.Start(ctx, mariadb.Config{Dir: *dir, BindAddress: *bind, Port: *port,
		BufferPool: *bufferPool, Logger: log})
	if err != nil {
		err = fmt.Errorf("agent mariadb: %w", err)
		if werr := remote.WriteState(*dir, remote.ServerState{Error: err.Error()}); werr != nil {
			return errors.Join(err, werr)
		}
		return err
	}
	st := remote.ServerState{Socket: srv.Socket, Host: srv.Host, Port: srv.Port, User: srv.User,
		Password: srv.Password, DB: srv.DB, Pid: srv.Pid, AgentPid: os.Getpid(), Version: srv.Version,
		CertDir: srv.CertDir}
	err = remote.WriteState(*dir, st)
	if err == nil {
		log.Info("mariadb serving", "pid", srv.Pid, "addr", fmt.Sprintf("%s:%d", srv.Host, srv.Port), "for", *lifetime)
		t := time.NewTimer(*lifetime)
		select {
		case <-ctx.Done():
			log.Info("stopping mariadb: signalled")
		case <-t.C:
			log.Info("stopping mariadb: --for has passed", "for", *lifetime)
		}
		t.Stop()
	}
	// Not ctx: it is cancelled by now. Stop bounds itself (clean shutdown, then SIGKILL).
	if serr := srv.Stop(context.Background()); serr != nil {
		err = errors.Join(err, serr)
	}
	if err != nil {
		return fmt.Errorf("agent mariadb: %w", err)
	}
	return nil
}
