package remote

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/hosts"
	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/pki"
	"github.com/wirelab/wirelab/internal/postgres"
	"github.com/wirelab/wirelab/internal/sysbench"
)

// PostgresPort is the port of the PostgreSQL wirelab starts on a server host: not 5432,
// which the cluster Debian's postgresql-15 package creates and starts keeps for itself.
const PostgresPort = 15432

// postgresBins is the pre-check's form of postgres.FindBinDir: a Debian version directory
// with initdb, postgres and psql, or those three beside an initdb in PATH.
const postgresBins = `for d in /usr/lib/postgresql/*/bin; do [ -x "$d/initdb" ] && [ -x "$d/postgres" ] && [ -x "$d/psql" ] && exit 0; done
i=$(command -v initdb) || exit 1; d=$(dirname "$(readlink -f "$i")"); [ -x "$d/postgres" ] && [ -x "$d/psql" ]`

// postgresEngine is PostgreSQL from the distribution's postgresql-15, run by `wirelab
// agent postgres` (postgres.Start on the host: its own datadir, configuration and port;
// nothing of /etc/postgresql is read) as the lab runs it.
type postgresEngine struct{}

// Spec implements Engine.
func (postgresEngine) Spec() EngineSpec {
	return EngineSpec{Kind: engine.Postgres, Port: PostgresPort, Comms: []string{"postgres"},
		ServerNeeds: []Need{
			{What: "PostgreSQL's initdb, postgres and psql (/usr/lib/postgresql/*/bin)", Check: postgresBins, Package: "postgresql-15"},
			{What: "the OS user postgres, who runs the server", Check: "id -u postgres", Package: "postgresql-15"},
			program("setpriv", "util-linux"),
			// The data set is prepared over the server's socket, on its host.
			sysbenchDriver(sysbench.DriverPgSQL),
		},
		// libpq needs no client files for sslmode=require; the CA lets `verify-full` be
		// asked of the client's copy.
		ClientFiles: []string{pki.CAFile}, Driver: sysbench.DriverPgSQL,
		// A backend process per connection, each a child of the postmaster.
		WatchTree: true}
}

// Facts implements Engine: the agent read the settings with the server's own psql as it
// started it (engine.PostgresServer.Facts, as in the lab), so they come from the state.
func (postgresEngine) Facts(_ context.Context, h hosts.Host, st ServerState) (engine.Facts, error) {
	f := engine.Facts{Engine: string(engine.Postgres), Version: st.Version, Settings: st.Settings}
	if len(st.Settings) == 0 {
		return f, fmt.Errorf("host %s: read postgres's settings: the agent's %s has none", h.Name(), StateFile)
	}
	return f, nil
}

// Planned implements Engine: the socket directory and certificates postgres.Start makes
// in dir, and its bench user and database.
func (postgresEngine) Planned(dir string) ServerState {
	socket, certs := postgres.PathsIn(dir)
	return ServerState{Socket: socket, User: postgres.BenchUser, DB: postgres.BenchDB, CertDir: certs}
}

// StartHere implements Engine: postgres.Start on this host, as the lab starts it (initdb
// of a private datadir, its own postgresql.conf and pg_hba.conf, TLS certificates, the
// bench role with a password from any host), and the wire's settings read once it
// answers, with the server's own psql, for the report.
func (postgresEngine) StartHere(ctx context.Context, o ServerOptions, log *slog.Logger) (ServerState, func(context.Context) error, error) {
	if o.replication() {
		return ServerState{}, nil, errors.New("--server-id, --log-bin and --set are MariaDB's replication settings; a PostgreSQL agent takes none")
	}
	srv, err := postgres.Start(ctx, postgres.Config{Dir: o.Dir, BindAddress: o.Bind, Port: o.Port,
		SharedBuffers: lab.SharedBuffers(o.BufferPool), Logger: log})
	if err != nil {
		return ServerState{}, nil, err
	}
	facts, err := engine.FromPostgres(srv).Facts(ctx)
	if err != nil {
		return ServerState{}, nil, errors.Join(fmt.Errorf("read the settings: %w", err), srv.Stop(context.WithoutCancel(ctx)))
	}
	st := ServerState{Socket: srv.SocketDir, Host: srv.Host, Port: srv.Port, User: srv.User,
		Password: srv.Password, DB: srv.DB, Pid: srv.Pid, Version: srv.Version, CertDir: srv.CertDir,
		Settings: facts.Settings}
	return st, srv.Stop, nil
}
