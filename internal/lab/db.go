package lab

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/mariadb"
	"github.com/wirelab/wirelab/internal/postgres"
)

// DBOptions tunes the database server a lab host runs.
type DBOptions struct {
	// Engine is the server's kind; "" is MariaDB.
	Engine engine.Kind
	// BufferPool is the data cache (MariaDB's innodb_buffer_pool_size, PostgreSQL's
	// shared_buffers), default 1G: the studies are CPU/network bound, not IO.
	BufferPool string
	ServerID   int  // MariaDB replication
	LogBin     bool // MariaDB replication
	// Extra are more server settings (my.cnf or postgresql.conf); they override ours.
	Extra map[string]string
	// Upstream makes a PostgreSQL server a streaming replica of another (a base backup
	// of it instead of initdb).
	Upstream *postgres.Upstream
}

// StartServer starts a database server inside host, listening on the host's lab address,
// 127.0.0.1 (the local-tcp path) and a unix socket, and records it in the lab state (the
// server host's one as State.DB, for `wirelab exec` and `status`).
func (l *Lab) StartServer(ctx context.Context, host string, o DBOptions) (engine.Server, error) {
	kind := o.Engine
	if kind == "" {
		kind = engine.MariaDB
	}
	dir := l.ServerDir(kind, host)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("start %s in %s: %w", kind, host, err)
	}
	if o.BufferPool == "" {
		o.BufferPool = "1G"
	}
	bind, log := HostAddr[host]+",127.0.0.1", l.log.With("host", host)
	var srv engine.Server
	switch kind {
	case engine.MariaDB:
		s, err := mariadb.Start(ctx, mariadb.Config{
			NS: l.State.NS(host), Dir: dir, BindAddress: bind, Port: kind.Port(),
			ServerID: o.ServerID, LogBin: o.LogBin, GTID: o.LogBin, BinlogFormat: "ROW",
			BufferPool: o.BufferPool, Extra: o.Extra, Logger: log, Cgroup: l.State.Cgroup,
		})
		if err != nil { // Start stops what it started; teardown removes the dir
			return nil, fmt.Errorf("start mariadb in %s: %w", host, err)
		}
		srv = engine.FromMariaDB(s)
	case engine.Postgres:
		s, err := postgres.Start(ctx, postgres.Config{
			NS: l.State.NS(host), Dir: dir, BindAddress: bind, Port: kind.Port(),
			SharedBuffers: SharedBuffers(o.BufferPool), Extra: o.Extra, Upstream: o.Upstream,
			Logger: log, Cgroup: l.State.Cgroup,
		})
		if err != nil {
			return nil, fmt.Errorf("start postgres in %s: %w", host, err)
		}
		srv = engine.FromPostgres(s)
	default:
		return nil, fmt.Errorf("start server in %s: unknown engine %q", host, kind)
	}
	l.State.Procs = append(l.State.Procs, Proc{Name: string(kind) + "-" + host, Host: host, Pid: srv.Pid()})
	if host == Server {
		c := srv.Conn()
		l.State.DB = &DB{Engine: kind, Host: c.Host, Port: c.Port, Socket: c.Socket, User: c.User,
			Password: c.Password, Name: c.DB, CertDir: c.CertDir, Version: srv.Version()}
	}
	return srv, l.State.Save()
}

// ServerDir is where StartServer keeps a server's datadir, configuration and logs.
func (l *Lab) ServerDir(kind engine.Kind, host string) string {
	return filepath.Join(l.State.TempDir, string(kind)+"-"+host)
}

// StopServer undoes StartServer for the server in host: it stops srv, removes its
// directory (so the next StartServer there begins with a fresh datadir) and forgets it in
// the lab state. It is idempotent; a study that starts different servers in the same host
// one after another calls it between them.
func (l *Lab) StopServer(ctx context.Context, host string, srv engine.Server) error {
	kind := srv.Kind()
	if err := srv.Stop(ctx); err != nil {
		return fmt.Errorf("stop %s in %s: %w", kind, host, err)
	}
	if err := os.RemoveAll(l.ServerDir(kind, host)); err != nil {
		return fmt.Errorf("stop %s in %s: %w", kind, host, err)
	}
	l.State.Procs = removeProc(l.State.Procs, string(kind)+"-"+host)
	if host == Server {
		l.State.DB = nil
	}
	return l.State.Save()
}

// BufferPoolForm is the accepted form of a buffer pool size, for messages.
const BufferPoolForm = "a whole number of K, M or G bytes, 16M to 1024G, e.g. 512M or 1G"

// minBufferPool is the smallest buffer pool accepted: below it MariaDB and PostgreSQL
// raise or refuse the setting, so the server would not run with what was asked.
const minBufferPool = 16 << 20

// CheckBufferPool refuses a --buffer-pool size the servers would not take as given; it
// runs before anything starts, since the value is written verbatim into my.cnf or
// postgresql.conf and a bad one surfaces only as a server that fails to start.
func CheckBufferPool(s string) error {
	n := len(s)
	if n < 2 {
		return fmt.Errorf("--buffer-pool %q: want %s", s, BufferPoolForm)
	}
	mult := map[byte]int64{'K': 1 << 10, 'k': 1 << 10, 'M': 1 << 20, 'G': 1 << 30}[s[n-1]]
	v, err := strconv.ParseInt(s[:n-1], 10, 64)
	if mult == 0 || err != nil || v <= 0 || v > 1<<40/mult || v*mult < minBufferPool {
		return fmt.Errorf("--buffer-pool %q: want %s", s, BufferPoolForm)
	}
	return nil
}

// SharedBuffers writes a --buffer-pool size ("1G", MariaDB's style) the way
// postgresql.conf spells it ("1GB"), for PostgreSQL's shared_buffers.
func SharedBuffers(s string) string {
	if n := len(s); n > 0 && (s[n-1] == 'G' || s[n-1] == 'M' || s[n-1] == 'K' || s[n-1] == 'k') {
		return s + "B"
	}
	return s
}
