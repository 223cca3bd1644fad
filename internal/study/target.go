package study

import (
	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/pgbench"
	"github.com/wirelab/wirelab/internal/sysbench"
)

// SysbenchTo points sysbench options at a server: the engine's driver, the bench user,
// database and certificates. Where to connect (Host/Port/Socket) stays the caller's: a
// cell may go through a socat hop or a tunnel instead of to the server itself.
func SysbenchTo(c engine.Conn, o sysbench.Options) sysbench.Options {
	o.Driver = sysbench.DriverMySQL
	if c.Engine == engine.Postgres {
		o.Driver = sysbench.DriverPgSQL
	}
	o.User, o.Password, o.DB, o.CertDir = c.User, c.Password, c.DB, c.CertDir
	return o
}

// PgbenchTo points pgbench options at a server: the bench user and database. As with
// SysbenchTo, where to connect and TLS stay the caller's (TLS is sslmode=require, without the CA:
// the lab measures what encryption costs on the wire, not certificate checking).
func PgbenchTo(c engine.Conn, o pgbench.Options) pgbench.Options {
	o.User, o.Password, o.DB = c.User, c.Password, c.DB
	return o
}
