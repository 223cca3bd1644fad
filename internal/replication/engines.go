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
