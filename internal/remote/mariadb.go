package remote

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/hosts"
	"github.com/wirelab/wirelab/internal/mariadb"
	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/sysbench"
)

// mariadbEngine is MariaDB from the distribution's mariadb-server, run by `wirelab agent
// mariadb` (mariadb.Start on the host) as the lab runs it.
type mariadbEngine struct{}

// Spec implements Engine.
func (mariadbEngine) Spec() EngineSpec {
	return EngineSpec{Kind: engine.MariaDB, Port: mariadb.DefaultPort, Comms: []string{"mariadbd", "mysqld"},
		ServerNeeds: []Need{program("mariadbd", "mariadb-server"), program("mariadb-install-db", "mariadb-server"),
			program("mariadb", "mariadb-client"), program("sysbench", "sysbench")},
		// sysbench 1.0.20 reads its TLS files from its working directory.
		ClientFiles: sysbench.TLSFiles, Driver: sysbench.DriverMySQL}
}

// Planned implements Engine: the socket and certificates mariadb.Start makes in dir, and
// its bench user and database.
func (mariadbEngine) Planned(dir string) ServerState {
	socket, certs := mariadb.PathsIn(dir)
	return ServerState{Socket: socket, User: mariadb.BenchUser, DB: mariadb.BenchDB, CertDir: certs}
}

// StartHere implements Engine: mariadb.Start on this host, as the lab starts it (datadir,
// my.cnf, TLS certificates, the bench user allowed from any host).
func (mariadbEngine) StartHere(ctx context.Context, o ServerOptions, log *slog.Logger) (ServerState, func(context.Context) error, error) {
	srv, err := mariadb.Start(ctx, mariadb.Config{Dir: o.Dir, BindAddress: o.Bind, Port: o.Port,
		BufferPool: o.BufferPool, ServerID: o.ServerID, LogBin: o.LogBin, Extra: o.Extra, Logger: log})
	if err != nil {
		return ServerState{}, nil, err
	}
	st := ServerState{Socket: srv.Socket, Host: srv.Host, Port: srv.Port, User: srv.User,
		Password: srv.Password, DB: srv.DB, Pid: srv.Pid, Version: srv.Version, CertDir: srv.CertDir}
	return st, srv.Stop, nil
}

// clientArgv is the mariadb client on the server host, as root over the unix socket
// (unix_socket authentication), one batch of SQL, rows tab-separated without a header.
// --no-defaults first so no option file of the host is read; no TLS over the socket.
func clientArgv(socket, sql string) []string {
	return []string{"mariadb", "--no-defaults", "--protocol=socket", "--socket=" + socket, "--user=root",
		"--batch", "--raw", "--skip-column-names", "--connect-timeout=5", "--skip-ssl", "--execute=" + sql}
}

// Facts implements Engine: engine.MariaDBSettings read with the mariadb client on the
// server host, so a remote server's report names the same settings as a lab server's.
func (mariadbEngine) Facts(ctx context.Context, h hosts.Host, st ServerState) (engine.Facts, error) {
	f := engine.Facts{Engine: string(engine.MariaDB), Version: st.Version}
	cols := make([]string, len(engine.MariaDBSettings))
	for i, name := range engine.MariaDBSettings {
		cols[i] = "@@" + name
	}
	out, err := h.Run(ctx, clientArgv(st.Socket, "SELECT "+strings.Join(cols, ", "))...)
	if err != nil {
		return f, fmt.Errorf("host %s: read mariadb's settings: %w", h.Name(), err)
	}
	vals := strings.Split(strings.TrimRight(string(out), "\r\n"), "\t")
	if len(vals) != len(engine.MariaDBSettings) {
		return f, fmt.Errorf("host %s: read mariadb's settings: want %d tab-separated values, got %q",
			h.Name(), len(engine.MariaDBSettings), out)
	}
	for i, name := range engine.MariaDBSettings {
		f.Settings = append(f.Settings, result.Setting{Name: name, Value: vals[i]})
	}
	return f, nil
}
