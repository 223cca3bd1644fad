package cli

import (
	"context"

	"github.com/wirelab/wirelab/internal/mariadb"
	"github.com/wirelab/wirelab/internal/remote"
)

// agentMariaDB is `wirelab agent mariadb`: mariadb.Start on this host, as the lab starts
// it (datadir, my.cnf, TLS certificates, the bench user allowed from any host).
type agentMariaDB struct{}

func (agentMariaDB) start(ctx context.Context, c agentServerConfig) (remote.ServerState, func(context.Context) error, error) {
	srv, err := mariadb.Start(ctx, mariadb.Config{Dir: c.dir, BindAddress: c.bind, Port: c.port,
		BufferPool: c.bufferPool, ServerID: c.repl.serverID, LogBin: c.repl.logBin, Extra: c.repl.set, Logger: c.log})
	if err != nil {
		return remote.ServerState{}, nil, err
	}
	st := remote.ServerState{Socket: srv.Socket, Host: srv.Host, Port: srv.Port, User: srv.User,
		Password: srv.Password, DB: srv.DB, Pid: srv.Pid, Version: srv.Version, CertDir: srv.CertDir}
	return st, srv.Stop, nil
}
