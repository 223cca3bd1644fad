package lab

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/wirelab/wirelab/internal/mariadb"
)

// DBOptions tunes the MariaDB a lab host runs.
type DBOptions struct {
	BufferPool string // innodb_buffer_pool_size; the studies are CPU/network bound, not IO
	ServerID   int
	LogBin     bool
	Extra      map[string]string
}

// StartMariaDB starts a MariaDB server inside host, listening on the host's lab address
// and a unix socket, and records it in the lab state (the server host's one as State.DB).
func (l *Lab) StartMariaDB(ctx context.Context, host string, o DBOptions) (*mariadb.Server, error) {
	dir := filepath.Join(l.State.TempDir, "mariadb-"+host)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("start mariadb in %s: %w", host, err)
	}
	if o.BufferPool == "" {
		o.BufferPool = "1G"
	}
	srv, err := mariadb.Start(ctx, mariadb.Config{
		NS: l.State.NS(host), Dir: dir, BindAddress: HostAddr[host] + ",127.0.0.1", Port: 3306, // loopback: the local-tcp path
		ServerID: o.ServerID, LogBin: o.LogBin, GTID: o.LogBin, BinlogFormat: "ROW",
		BufferPool: o.BufferPool, Extra: o.Extra, Logger: l.log.With("host", host), Cgroup: l.State.Cgroup,
	})
	if err != nil { // Start stops what it started; teardown removes the dir
		return nil, fmt.Errorf("start mariadb in %s: %w", host, err)
	}
	l.State.Procs = append(l.State.Procs, Proc{Name: "mariadbd-" + host, Host: host, Pid: srv.Pid})
	if host == Server {
		l.State.DB = &DB{Host: srv.Host, Port: srv.Port, Socket: srv.Socket, User: srv.User,
			Password: srv.Password, Name: srv.DB, CertDir: srv.CertDir, DataDir: srv.DataDir,
			Version: srv.Version}
	}
	return srv, l.State.Save()
}
