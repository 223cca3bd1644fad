package replication

import (
	"context"
	"fmt"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/study"
)

// backend is one engine's side of the study: the servers the Session starts before
// Setup, the Replicator that works on them, the heartbeat's SQL and the words the notes
// use. Everything else (scenarios, search, stats, headlines) is the same on every engine.
type backend struct {
	servers func(o Options) []study.Server
	// open wraps the servers the Session started in a Replicator and opens the Pair's
	// source handle (and the replica's, when the replica already exists).
	open    func(ctx context.Context, p *Pair, e *study.Env, o Options) (Replicator, error)
	dialect Dialect
	terms   Terms
}

// Terms are an engine's words for what the notes and headlines describe.
type Terms struct {
	Log      string // the replication log: "binlog", "WAL"
	Checksum string // how tables are compared: "CHECKSUM TABLE", "md5 of every row"
}

// backends is the explicit registry of engines the study runs on.
var backends = map[engine.Kind]backend{
	engine.MariaDB: {servers: mariadbServers, open: openMariaDB, dialect: MySQLDialect,
		terms: Terms{Log: "binlog", Checksum: "CHECKSUM TABLE"}},
	engine.Postgres: {servers: postgresServers, open: openPostgres, dialect: PostgresDialect,
		terms: Terms{Log: "WAL", Checksum: "row count and md5 of every row"}},
}

// kind is the options' engine, MariaDB unless set.
func (o Options) kind() engine.Kind {
	if o.Engine == "" {
		return engine.MariaDB
	}
	return o.Engine
}

// backend is the options' engine's side of the study.
func (o Options) backend() (backend, error) {
	b, ok := backends[o.kind()]
	if !ok {
		return backend{}, fmt.Errorf("replication: no support for engine %q", o.kind())
	}
	return b, nil
}

// TermsFor are the engine's words (MariaDB's for an unknown engine).
func TermsFor(k engine.Kind) Terms {
	if b, ok := backends[k]; ok {
		return b.terms
	}
	return backends[engine.MariaDB].terms
}

// ServersFor are the servers the Session starts for a pair on o's engine (MariaDB: a
// source and an empty replica; PostgreSQL: the primary, its standby comes with Start).
// Another study that needs a replica (the sync study) asks for these in its Needs.
func ServersFor(o Options) ([]study.Server, error) {
	b, err := o.backend()
	if err != nil {
		return nil, err
	}
	return b.servers(o), nil
}

// OpenPair wraps the servers the Session started in a Pair and the engine's Replicator,
// opening the source's SQL handle (and the replica's when it already exists); tables are
// the data set's, which the replica's checks compare. Replication
// is not started: call the Replicator's Start. The caller closes the Pair.
func OpenPair(ctx context.Context, e *study.Env, o Options, tables []Table) (*Pair, Replicator, error) {
	b, err := o.backend()
	if err != nil {
		return nil, nil, err
	}
	p := &Pair{Backend: e.Backend, Tables: tables, Self: e.Self, Tunnel: o.Tunnel,
		Log: e.Logger.With("component", "replication")}
	rep, err := b.open(ctx, p, e, o)
	if err != nil {
		p.Close()
		return nil, nil, err
	}
	return p, rep, nil
}
