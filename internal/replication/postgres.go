package replication

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/lib/pq"
	"github.com/lib/pq/pqerror"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/postgres"
	"github.com/wirelab/wirelab/internal/study"
)

// PostgresSlot is the physical replication slot the standby streams through: the primary
// keeps every WAL segment the standby has not received, however far behind a slow or
// dropped wire leaves it.
const PostgresSlot = "wirelab_replica"

// postgresPrimaryExtra: with synchronous_commit=off a commit's WAL reaches the disk, and
// only then the WAL sender, within 3 × wal_writer_delay. At the default 200 ms that
// cadence, not the wire, would be a lag floor of up to 0.6 s; MariaDB sends a transaction
// at commit. 10 ms keeps the floor under the heartbeat's own 100 ms resolution.
//
// checkpoint_timeout and max_wal_size keep checkpoints out of a run: after one, the first
// change of every page writes its full 8 kB image into the WAL, and whether a point ran
// just after a checkpoint would decide it, not its channel (see warmUp and the notes).
var postgresPrimaryExtra = map[string]string{"wal_writer_delay": "10ms", "checkpoint_timeout": "1h", "max_wal_size": "8GB"}

// postgresStandbyExtra is MariaDB's MASTER_CONNECT_RETRY=1 in PostgreSQL's words: a
// failed connection (a switched channel whose slot the old WAL sender still holds) is
// retried every second instead of every 5. wal_receiver_timeout stays at its 60 s: after
// a dropped wire TCP resumes by itself, while a receiver that gives up reconnects and
// re-streams its whole current WAL segment (up to 16 MB) across the wire.
var postgresStandbyExtra = map[string]string{"wal_retrieve_retry_interval": "1s"}

// postgresServers is the primary alone. The standby is a base backup of it, so it can
// only start once the data set is prepared: Start does that in Setup.
func postgresServers(o Options) []study.Server {
	return []study.Server{{Host: lab.Server, DB: lab.DBOptions{Engine: engine.Postgres, BufferPool: o.BufferPool,
		Extra: postgresPrimaryExtra}}}
}

// postgresReplicator is physical streaming replication between two PostgreSQL servers:
// a standby built by pg_basebackup across the wire, primary_conninfo per channel, LSNs
// for positions, md5 of every row for checksums.
type postgresReplicator struct {
	p        *Pair
	backend  study.Backend // starts the standby
	pool     string
	src, rep *postgres.Server
	up       postgres.Upstream // the native channel's connection; Use changes host and port
}

// openPostgres takes the primary the Session started and opens the Pair's source handle;
// the standby comes with Start.
func openPostgres(_ context.Context, p *Pair, e *study.Env, o Options) (Replicator, error) {
	if len(e.Servers) < 1 {
		return nil, fmt.Errorf("replication: the session started no primary")
	}
	src, ok := e.Servers[0].(*engine.PostgresServer)
	if !ok {
		return nil, fmt.Errorf("replication: the primary must be a PostgreSQL server, got %s", e.Servers[0].Kind())
	}
	p.Source = src
	var err error
	if p.SrcDB, err = OpenPostgres(src.Server); err != nil {
		return nil, err
	}
	return &postgresReplicator{p: p, backend: e.Backend, pool: o.BufferPool, src: src.Server}, nil
}

// Start creates the replication role, takes the base backup from inside the replica host
// (so the copy crosses the wire, through a new slot), starts the standby and waits until
// it streams from the primary, has caught up and matches it.
func (g *postgresReplicator) Start(ctx context.Context, timeout time.Duration) error {
	user, pw, err := g.src.CreateReplUser(ctx)
	if err != nil {
		return err
	}
	g.up = postgres.Upstream{Host: lab.HostAddr[lab.Server], Port: g.src.Port, User: user, Password: pw,
		BenchPassword: g.src.Password, Slot: PostgresSlot}
	up := g.up
	srv, err := g.backend.StartServer(ctx, study.Server{Host: lab.Replica, DB: lab.DBOptions{Engine: engine.Postgres,
		BufferPool: g.pool, Extra: postgresStandbyExtra, Upstream: &up}})
	if err != nil {
		return fmt.Errorf("start standby: %w", err)
	}
	rep, ok := srv.(*engine.PostgresServer)
	if !ok {
		return fmt.Errorf("start standby: got a %s server", srv.Kind())
	}
	g.p.Replica, g.rep = rep, rep.Server
	if g.p.RepDB, err = OpenPostgres(rep.Server); err != nil {
		return err
	}
	if err := g.waitStreaming(ctx, g.up.Host, g.up.Port, 30*time.Second); err != nil {
		return fmt.Errorf("start standby: %w", err)
	}
	g.p.using(Native, g.up.Host, g.up.Port, false)
	if err := g.warmUp(ctx); err != nil {
		return err
	}
	if _, err := g.CatchUp(ctx, timeout); err != nil {
		return fmt.Errorf("initial copy: %w", err)
	}
	if err := g.Verify(ctx); err != nil {
		return fmt.Errorf("initial copy: %w", err)
	}
	return nil
}

// warmUp writes every heap and index page of the data set once, while the wire is still
// unshaped: the base backup's checkpoint makes the next change of each page carry its
// full image in the WAL, and without this the first points would replicate those images
// instead of their load (warmUpSQL: each table's counter up by one and back, then VACUUM,
// so autovacuum does not clear the dead versions during a point). The data ends as it was.
func (g *postgresReplicator) warmUp(ctx context.Context) error {
	for _, t := range g.p.Tables {
		for _, stmt := range warmUpSQL(t) {
			if _, err := g.p.SrcDB.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("warm up %s: %s: %w", t.Name, stmt, err)
			}
		}
	}
	return nil
}

// Use sets primary_conninfo to the channel's endpoint and reloads; the WAL receiver
// reconnects there and asks for the WAL from the standby's own position.
func (g *postgresReplicator) Use(ctx context.Context, ch Channel) error {
	if ch == NativeCompressed {
		return fmt.Errorf("use channel %s: PostgreSQL's replication protocol has no compression", ch)
	}
	host, port, _, err := g.p.endpoint(ctx, ch)
	if err != nil {
		return err
	}
	u := g.up
	u.Host, u.Port = host, port
	if err := g.rep.Follow(ctx, u); err != nil {
		return fmt.Errorf("use channel %s: %w", ch, err)
	}
	if err := g.waitStreaming(ctx, host, port, 30*time.Second); err != nil {
		return fmt.Errorf("use channel %s: %w", ch, err)
	}
	g.p.using(ch, host, port, false)
	return nil
}

// waitStreaming waits until pg_stat_wal_receiver shows the standby streaming from
// host:port: after a reload the old receiver may still stream from the old endpoint for a
// moment, so the sender's address must be the new one.
func (g *postgresReplicator) waitStreaming(ctx context.Context, host string, port int, timeout time.Duration) error {
	var r postgres.Receiver
	var ok bool
	var last error
	return waitFor(ctx, timeout, func() (bool, error) {
		r, ok, last = g.rep.Receiver(ctx)
		return last == nil && streamingFrom(r, ok, host, port), nil
	}, func() error {
		if last != nil {
			return last
		}
		return fmt.Errorf("WAL receiver not streaming from %s:%d after %s (%s)", host, port, timeout, receiverText(r, ok))
	})
}

// streamingFrom says whether a WAL receiver streams from host:port.
func streamingFrom(r postgres.Receiver, ok bool, host string, port int) bool {
	return ok && r.Status == "streaming" && r.Host == host && r.Port == port
}

func receiverText(r postgres.Receiver, ok bool) string {
	if !ok {
		return "no WAL receiver running"
	}
	return fmt.Sprintf("WAL receiver %s from %s:%d, received up to %s", r.Status, r.Host, r.Port, r.WrittenLSN)
}

// CatchUp waits until the standby has received over its current connection, and
// replayed, the WAL up to the primary's insert position. Received matters after a channel
// switch: the new connection re-streams the current WAL segment from its start, and a
// point must not begin while the wire still carries that.
func (g *postgresReplicator) CatchUp(ctx context.Context, timeout time.Duration) (time.Duration, error) {
	start := time.Now()
	lsn, err := g.src.WALPosition(ctx)
	if err != nil {
		return 0, err
	}
	if err := g.rep.WaitCaughtUp(ctx, lsn, timeout); err != nil {
		if r, ok, rerr := g.rep.Receiver(ctx); rerr == nil {
			err = fmt.Errorf("%w (%s)", err, receiverText(r, ok))
		}
		return time.Since(start), err
	}
	return time.Since(start), nil
}

// Verify compares the row count and the md5 of every row of each of the Pair's tables.
func (g *postgresReplicator) Verify(ctx context.Context) error {
	return verify(ctx, g.p, PostgresChecksums)
}

// LogBytes is the primary's WAL insert position: its growth is the WAL generated.
func (g *postgresReplicator) LogBytes(ctx context.Context) (int64, error) {
	lsn, err := g.src.WALPosition(ctx)
	if err != nil {
		return 0, err
	}
	n, err := postgres.ParseLSN(lsn)
	if err != nil {
		return 0, fmt.Errorf("wal position: %w", err)
	}
	return int64(n), nil
}

// postgresDSN is the libpq connection string of the bench role over the server's socket
// directory: the SQL never touches the wire, and TLS is off (it would only cost CPU).
func postgresDSN(s *postgres.Server) string {
	kv := func(k, v string) string { return k + "='" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(v) + "'" }
	return strings.Join([]string{kv("host", s.SocketDir), kv("port", strconv.Itoa(s.Port)), kv("user", s.User),
		kv("password", s.Password), kv("dbname", s.DB), kv("sslmode", "disable"), kv("connect_timeout", "5"),
		kv("application_name", "wirelab-replication")}, " ")
}

// OpenPostgres connects to a lab PostgreSQL as its bench role over the unix socket.
func OpenPostgres(s *postgres.Server) (*sql.DB, error) {
	c, err := pq.NewConnector(postgresDSN(s))
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", s.SocketDir, err)
	}
	return ping(sql.OpenDB(c), s.SocketDir, s.User)
}

// postgresChecksumQuery is one table's row count and the md5 of its rows' md5s in key
// order: PostgreSQL has no CHECKSUM TABLE, and a row's text form is the same on the
// primary and on its physical copy. A table without a key (pgbench_history) has its rows'
// md5s sorted instead, bytewise, so the order the rows lie in does not matter.
func postgresChecksumQuery(t Table) string {
	from := pq.QuoteIdentifier(t.Name)
	if t.Key == "" {
		return "SELECT count(*), COALESCE(md5(string_agg(h, '' ORDER BY h COLLATE \"C\")), '-') FROM (SELECT md5(t::text) AS h FROM " +
			from + " t) r"
	}
	return "SELECT count(*), COALESCE(md5(string_agg(md5(t::text), '' ORDER BY t." + pq.QuoteIdentifier(t.Key) + ")), '-') FROM " +
		from + " t"
}

// PostgresChecksums returns table -> "<rows> rows, md5 <hex>" ("NULL" for a table the
// server does not have), in the form CompareChecksums takes.
func PostgresChecksums(ctx context.Context, db *sql.DB, tables []Table) (map[string]string, error) {
	out := map[string]string{}
	for _, t := range tables {
		var n int64
		var sum string
		err := db.QueryRowContext(ctx, postgresChecksumQuery(t)).Scan(&n, &sum)
		switch {
		case pq.As(err, pqerror.UndefinedTable) != nil:
			out[t.Name] = "NULL"
		case err != nil:
			return nil, fmt.Errorf("checksum %s: %w", t.Name, err)
		default:
			out[t.Name] = fmt.Sprintf("%d rows, md5 %s", n, sum)
		}
	}
	return out, nil
}
