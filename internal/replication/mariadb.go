package replication

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/hosts"
	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/mariadb"
	"github.com/wirelab/wirelab/internal/study"
)

// mariadbServers are a source and an empty replica, both with binlogs and GTIDs: the
// replica gets everything, the data set included, by replication.
func mariadbServers(o Options) []study.Server {
	return []study.Server{
		{Host: lab.Server, DB: lab.DBOptions{BufferPool: o.BufferPool, ServerID: 1, LogBin: true}},
		// slave_net_timeout: the IO thread notices a dead connection in 10 s instead of
		// 60, so a dropped wire heals quickly (MASTER_CONNECT_RETRY is 1 s).
		{Host: lab.Replica, DB: lab.DBOptions{BufferPool: o.BufferPool, ServerID: 2, LogBin: true,
			Extra: map[string]string{"slave_net_timeout": "10"}}},
	}
}

// mariadbReplicator is GTID replication between two MariaDB servers: CHANGE MASTER with
// MASTER_USE_GTID=slave_pos, CHECKSUM TABLE, binlog file sizes.
type mariadbReplicator struct {
	p                *Pair
	src, rep         *mariadb.Server
	replUser, replPw string
}

// openMariaDB takes the source and the replica the Session started and opens the Pair's
// SQL handles.
func openMariaDB(_ context.Context, p *Pair, e *study.Env, _ Options) (Replicator, error) {
	if len(e.Servers) < 2 {
		return nil, fmt.Errorf("replication: want a source and a replica, the session started %d server(s)", len(e.Servers))
	}
	src, srcDial, err1 := mariadbOf(e.Servers[0])
	rep, repDial, err2 := mariadbOf(e.Servers[1])
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("replication: the source and the replica must be MariaDB servers, got %s and %s: %w", e.Servers[0].Kind(), e.Servers[1].Kind(), errors.Join(err1, err2))
	}
	p.Source, p.Replica = e.Servers[0], e.Servers[1]
	var err error
	if p.SrcDB, err = OpenVia(src, srcDial); errors.Is(err, hosts.ErrNoDial) {
		p.Planned = true
		return &mariadbReplicator{p: p, src: src, rep: rep}, nil
	} else if err != nil {
		return nil, err
	}
	if p.RepDB, err = OpenVia(rep, repDial); err != nil {
		return nil, err
	}
	return &mariadbReplicator{p: p, src: src, rep: rep}, nil
}

// remoteMariaDB is a MariaDB on another host (remote.Server): administered through its
// host (the mariadb client there, as root) and reached by a connection to its socket
// opened from that host (through SSH), never across the shaped wire.
type remoteMariaDB interface {
	MariaDB() (*mariadb.Server, error)
	DialSocket(ctx context.Context) (net.Conn, error)
}

// mariadbOf is s as package mariadb administers it and how to reach its socket: a lab
// server's socket is a file of this machine (dial nil), a remote one's is dialled through
// its host.
func mariadbOf(s engine.Server) (*mariadb.Server, func(context.Context) (net.Conn, error), error) {
	switch m := s.(type) {
	case *engine.MariaDBServer:
		return m.Server, nil, nil
	case remoteMariaDB:
		srv, err := m.MariaDB()
		return srv, m.DialSocket, err
	}
	return nil, nil, fmt.Errorf("%T is not a MariaDB server", s)
}

// MariaDBOf is s, a MariaDB of the lab or of a real host, as package mariadb administers
// it (a real host's through its mariadb client over SSH): what another study of the Pair
// (the sync study's semi-sync modes) sets and reads on the source and the replica.
func MariaDBOf(s engine.Server) (*mariadb.Server, error) {
	m, _, err := mariadbOf(s)
	return m, err
}

// Start points the replica at the source over the native channel from the start of the
// source's binlog (GTID, empty slave position), so the replica replays everything the
// source has written — the sysbench prepare included — rather than building its own copy.
func (m *mariadbReplicator) Start(ctx context.Context, timeout time.Duration) error {
	var err error
	if m.replUser, m.replPw, err = m.src.CreateReplUser(ctx); err != nil {
		return err
	}
	// RESET SLAVE ALL clears any leftover configuration; gtid_slave_pos '' = start of binlog.
	if _, err := m.rep.Exec(ctx, "STOP SLAVE; RESET SLAVE ALL; SET GLOBAL gtid_slave_pos='';"); err != nil {
		return fmt.Errorf("reset replica: %w", err)
	}
	if err := m.Use(ctx, Native); err != nil {
		return err
	}
	if _, err := m.CatchUp(ctx, timeout); err != nil {
		return fmt.Errorf("initial copy: %w", err)
	}
	if err := m.Verify(ctx); err != nil {
		return fmt.Errorf("initial copy: %w", err)
	}
	return nil
}

// Use is STOP SLAVE, CHANGE MASTER, START SLAVE, then a wait until the IO thread is
// connected. With MASTER_USE_GTID=slave_pos the new connection resumes from the last
// applied transaction, so nothing is skipped or applied twice whatever was in flight.
func (m *mariadbReplicator) Use(ctx context.Context, ch Channel) error {
	host, port, compressed, err := m.p.endpoint(ctx, ch)
	if err != nil {
		return err
	}
	if err := m.rep.StopSlave(ctx); err != nil {
		return fmt.Errorf("use channel %s: %w", ch, err)
	}
	if err := m.rep.ChangeMaster(ctx, host, port, m.replUser, m.replPw, compressed); err != nil {
		return fmt.Errorf("use channel %s: %w", ch, err)
	}
	if err := m.rep.StartSlave(ctx); err != nil {
		return fmt.Errorf("use channel %s: %w", ch, err)
	}
	if m.p.Planned {
		m.p.using(ch, host, port, compressed)
		return nil
	}
	if err := m.waitIO(ctx, 30*time.Second); err != nil {
		return fmt.Errorf("use channel %s: %w", ch, err)
	}
	m.p.using(ch, host, port, compressed)
	return nil
}

// waitIO waits for Slave_IO_Running=Yes and Slave_SQL_Running=Yes.
func (m *mariadbReplicator) waitIO(ctx context.Context, timeout time.Duration) error {
	var st map[string]string
	var last error
	return waitFor(ctx, timeout, func() (bool, error) {
		st, last = m.rep.SlaveStatus(ctx)
		switch {
		case last != nil:
			return false, nil
		case st["Slave_IO_Running"] == "Yes" && st["Slave_SQL_Running"] == "Yes":
			return true, nil
		case st["Slave_SQL_Running"] == "No" && st["Last_SQL_Error"] != "":
			return false, fmt.Errorf("replica SQL thread stopped: %s", st["Last_SQL_Error"])
		}
		return false, nil
	}, func() error {
		if last != nil {
			return last
		}
		return fmt.Errorf("replica IO thread not connected after %s (IO %s, last IO error: %s)",
			timeout, st["Slave_IO_Running"], orNone(st["Last_IO_Error"]))
	})
}

// CatchUp waits for the replica to reach the source's current GTID position.
func (m *mariadbReplicator) CatchUp(ctx context.Context, timeout time.Duration) (time.Duration, error) {
	start := time.Now()
	pos, err := m.src.GTIDPos(ctx)
	if err != nil {
		return 0, err
	}
	if err := m.rep.WaitGTID(ctx, pos, timeout); err != nil {
		if st, serr := m.rep.SlaveStatus(ctx); serr == nil {
			err = fmt.Errorf("%w (IO %s, SQL %s, last IO error: %s, last SQL error: %s)", err,
				st["Slave_IO_Running"], st["Slave_SQL_Running"], orNone(st["Last_IO_Error"]), orNone(st["Last_SQL_Error"]))
		}
		return time.Since(start), err
	}
	return time.Since(start), nil
}

// Verify compares CHECKSUM TABLE of every table of the Pair on both servers.
func (m *mariadbReplicator) Verify(ctx context.Context) error {
	if m.p.Planned {
		return nil
	}
	return verify(ctx, m.p, func(ctx context.Context, db *sql.DB, ts []Table) (map[string]string, error) {
		return Checksums(ctx, db, TableNames(ts))
	})
}

// LogBytes is the size of the source's binlog files, as SHOW BINARY LOGS gives them (the
// active one at its write position), read on the source's own host.
func (m *mariadbReplicator) LogBytes(ctx context.Context) (int64, error) {
	rows, err := m.src.Rows(ctx, "SHOW BINARY LOGS")
	if err != nil {
		return 0, fmt.Errorf("binlog size: %w", err)
	}
	return BinlogBytes(rows)
}

// BinlogBytes is the total File_size of SHOW BINARY LOGS' rows; its growth over a point
// is the binlog rate.
func BinlogBytes(rows []map[string]string) (int64, error) {
	var n int64
	for _, r := range rows {
		v, err := strconv.ParseInt(r["File_size"], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("binlog size: %s: File_size %q: %w", r["Log_name"], r["File_size"], err)
		}
		n += v
	}
	return n, nil
}

// Open connects to a lab MariaDB as its bench user over the unix socket. The socket is a
// file, so this works from the host namespace and never touches the wire.
func Open(s *mariadb.Server) (*sql.DB, error) { return OpenVia(s, nil) }

// dialers numbers the dial functions OpenVia registers with the driver (a global
// registry keyed by network name).
var dialers atomic.Int64

// OpenVia connects to MariaDB s as its bench user over its unix socket: this machine's
// file when dial is nil, else the connection dial opens (a remote socket through SSH).
func OpenVia(s *mariadb.Server, dial func(context.Context) (net.Conn, error)) (*sql.DB, error) {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd = s.User, s.Password
	cfg.Net, cfg.Addr = "unix", s.Socket
	cfg.DBName = s.DB
	cfg.Timeout = 5 * time.Second
	cfg.ReadTimeout = 60 * time.Second
	cfg.WriteTimeout = 60 * time.Second
	cfg.InterpolateParams = true
	if dial != nil {
		cfg.Net = "wirelab-socket-" + strconv.FormatInt(dialers.Add(1), 10)
		mysql.RegisterDialContext(cfg.Net, func(ctx context.Context, _ string) (net.Conn, error) { return dial(ctx) })
		// An SSH channel has no deadlines: each call is bounded by its context (the
		// driver closes the connection when it ends) and a dead SSH connection by its
		// keepalive.
		cfg.ReadTimeout, cfg.WriteTimeout = 0, 0
	}
	c, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", s.Socket, err)
	}
	return ping(sql.OpenDB(c), s.Socket, s.User)
}

// Checksums runs CHECKSUM TABLE over tables and returns table -> checksum ("NULL" for a
// table the server does not have).
func Checksums(ctx context.Context, db *sql.DB, tables []string) (map[string]string, error) {
	q := "CHECKSUM TABLE " + strings.Join(quoteIdents(tables), ", ")
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("checksum tables: %w", err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var name string
		var sum sql.NullString
		if err := rows.Scan(&name, &sum); err != nil {
			return nil, fmt.Errorf("checksum tables: %w", err)
		}
		v := "NULL"
		if sum.Valid {
			v = sum.String
		}
		if i := strings.LastIndexByte(name, '.'); i >= 0 { // "sbtest.sbtest1"
			name = name[i+1:]
		}
		out[name] = v
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("checksum tables: %w", err)
	}
	return out, nil
}

func quoteIdents(ns []string) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = "`" + strings.ReplaceAll(n, "`", "``") + "`"
	}
	return out
}
