package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/postgres"
	"github.com/wirelab/wirelab/internal/remote"
)

// agentPostgres is `wirelab agent postgres`: postgres.Start on this host, as the lab
// starts it (initdb of a private datadir, its own postgresql.conf and pg_hba.conf, TLS
// certificates, the bench role with a password from any host), and the wire's settings
// read once it answers, with the server's own psql, for the report.
type agentPostgres struct{}

func (agentPostgres) start(ctx context.Context, c agentServerConfig) (remote.ServerState, func(context.Context) error, error) {
	if c.repl.given() {
		return remote.ServerState{}, nil, errors.New("--server-id, --log-bin and --set are MariaDB's replication settings; a PostgreSQL agent takes none")
	}
	srv, err := postgres.Start(ctx, postgres.Config{Dir: c.dir, BindAddress: c.bind, Port: c.port,
		SharedBuffers: lab.SharedBuffers(c.bufferPool), Logger: c.log})
	if err != nil {
		return remote.ServerState{}, nil, err
	}
	facts, err := engine.FromPostgres(srv).Facts(ctx)
	if err != nil {
		return remote.ServerState{}, nil, errors.Join(fmt.Errorf("read the settings: %w", err), srv.Stop(context.WithoutCancel(ctx)))
	}
	st := remote.ServerState{Socket: srv.SocketDir, Host: srv.Host, Port: srv.Port, User: srv.User,
		Password: srv.Password, DB: srv.DB, Pid: srv.Pid, Version: srv.Version, CertDir: srv.CertDir,
		Settings: facts.Settings}
	return st, srv.Stop, nil
}
