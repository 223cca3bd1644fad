package replaystudy

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/execx"
	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/replication"
	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/study"
)

// mariadbData is the data of a MariaDB/MySQL server. Its snapshot is a SQL file (the
// dump given, or a mariadb-dump of sysbench's tables once prepared); a reset drops every
// table and view of the database and loads the snapshot again: a reload, whose cost grows
// with the data (InnoDB has no copy of a whole database), but which brings back what a
// table copy would not (triggers, foreign keys, views).
type mariadbData struct {
	client, dumper command // the client that loads a file, mariadb-dump of the database
	launcher       execx.Launcher
	db             *sql.DB // lists, drops and checksums tables
	data           Data
	snapshot       string
	e              *study.Env
	// existing: the server is the user's, whose database was empty: close drops every
	// table the replay left there.
	existing bool
}

// labMariaDB is the data of the lab's MariaDB: its client runs as root over the unix
// socket (a dump's DEFINERs and SET statements need more than the bench user may), the
// SQL handle is the bench user's.
func labMariaDB(e *study.Env, srv *engine.MariaDBServer, d Data) (dataSet, error) {
	m := srv.Server
	db, err := replication.Open(m)
	if err != nil {
		return nil, err
	}
	conn := socketArgs(m.Socket)
	return &mariadbData{client: command{name: "mariadb", args: clientArgs(conn, m.DB)},
		dumper:   command{name: "mariadb-dump", args: dumpArgs(conn, m.DB, true)},
		launcher: e.Backend.Launcher(lab.Server), db: db, data: d, e: e}, nil
}

// existingMariaDB is the data of an existing server, reached from this machine outside
// the wire as the DSN's user (the password in the client's environment, never on its
// command line).
func existingMariaDB(e *study.Env, x *engine.External, d Data) (dataSet, error) {
	router, ok := e.Backend.(study.OutsideRouter)
	if !ok {
		return nil, fmt.Errorf("replay onto an existing server needs the lab's route to it from this machine")
	}
	c := x.Conn()
	db, err := openMySQL(c)
	if err != nil {
		return nil, err
	}
	conn := tcpArgs(c)
	env := []string{"MYSQL_PWD=" + c.Password}
	return &mariadbData{client: command{name: "mariadb", args: clientArgs(conn, c.DB), env: env},
		dumper:   command{name: "mariadb-dump", args: dumpArgs(conn, c.DB, false), env: env},
		launcher: router.OutsideLauncher(), db: db, data: d, e: e, existing: true}, nil
}

// socketArgs reach a lab server as root over its socket (unix_socket authentication).
// --no-defaults first, so no my.cnf is read; the 10.11 clients would use TLS even over
// the socket.
func socketArgs(socket string) []string {
	return []string{"--no-defaults", "--protocol=socket", "--socket=" + socket, "--user=root", "--skip-ssl"}
}

// tcpArgs reach an existing server as the DSN's user (MYSQL_PWD holds the password).
func tcpArgs(c engine.Conn) []string {
	return []string{"--no-defaults", "--protocol=tcp", "--host=" + c.Host, "--port=" + strconv.Itoa(c.Port), "--user=" + c.User}
}

// clientArgs load SQL from standard input into db, stopping at the first error (which
// the client names with its line).
func clientArgs(conn []string, db string) []string {
	return append(append([]string(nil), conn...), "--batch", "--database="+db)
}

// dumpArgs dump db whole and consistently (one transaction), with its triggers, and its
// routines where the user may read them (root: a lab's server).
func dumpArgs(conn []string, db string, routines bool) []string {
	a := append(append([]string(nil), conn...), "--single-transaction", "--triggers")
	if routines {
		a = append(a, "--routines")
	}
	return append(a, db)
}

// openMySQL is a SQL handle on an existing server's database, from this machine.
func openMySQL(c engine.Conn) (*sql.DB, error) {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.DBName = c.User, c.Password, c.DB
	cfg.Net, cfg.Addr = "tcp", net.JoinHostPort(c.Host, strconv.Itoa(c.Port))
	cfg.Timeout, cfg.ReadTimeout, cfg.WriteTimeout = 5*time.Second, 5*time.Minute, 5*time.Minute
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", cfg.Addr, err)
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(2)
	return db, nil
}

func (m *mariadbData) load(ctx context.Context) error {
	if m.data.Dump != "" {
		if err := runWithFile(ctx, m.launcher, m.client, m.data.Dump, false); err != nil {
			return fmt.Errorf("load --dump %s: %w", m.data.Dump, err)
		}
		m.snapshot = m.data.Dump
		return nil
	}
	path, err := snapshotFile(m.e)
	if err != nil {
		return err
	}
	if err := runWithFile(ctx, m.launcher, m.dumper, path, true); err != nil {
		return fmt.Errorf("keep sysbench's tables to start every point from: %w", err)
	}
	m.snapshot = path
	return nil
}

func (m *mariadbData) reset(ctx context.Context) error {
	if err := m.dropAll(ctx); err != nil {
		return fmt.Errorf("reset the data: %w", err)
	}
	if err := runWithFile(ctx, m.launcher, m.client, m.snapshot, false); err != nil {
		return fmt.Errorf("reset the data: load %s: %w", m.snapshot, err)
	}
	return nil
}

// dropAll drops every view and table of the database, on one connection with the foreign
// keys' checks off (they are the session's).
func (m *mariadbData) dropAll(ctx context.Context) error {
	conn, err := m.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	views, err := names(ctx, conn, "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_type = 'VIEW'")
	if err != nil {
		return err
	}
	tables, err := names(ctx, conn, "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_type <> 'VIEW'")
	if err != nil {
		return err
	}
	stmts := []string{"SET SESSION foreign_key_checks = 0"}
	if len(views) > 0 {
		stmts = append(stmts, "DROP VIEW IF EXISTS "+strings.Join(quoteMySQL(views), ", "))
	}
	if len(tables) > 0 {
		stmts = append(stmts, "DROP TABLE IF EXISTS "+strings.Join(quoteMySQL(tables), ", "))
	}
	for _, s := range stmts {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	return nil
}

func (m *mariadbData) checksums(ctx context.Context) ([]result.TableChecksum, error) {
	tables, err := names(ctx, m.db, "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_type = 'BASE TABLE'")
	if err != nil || len(tables) == 0 {
		return nil, err
	}
	sums, err := replication.Checksums(ctx, m.db, tables)
	if err != nil {
		return nil, err
	}
	return sorted(sums), nil
}

func (m *mariadbData) close(ctx context.Context) error {
	if m.db == nil {
		return nil
	}
	var err error
	if m.existing {
		err = m.dropAll(ctx)
	}
	err = errors.Join(err, m.db.Close())
	m.db = nil
	return err
}

// querier is a SQL handle or one of its connections.
type querier interface {
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
}

// names is the first column of q's rows.
func names(ctx context.Context, db querier, q string) ([]string, error) {
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, fmt.Errorf("list tables: %w", err)
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

func quoteMySQL(ns []string) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = "`" + strings.ReplaceAll(n, "`", "``") + "`"
	}
	return out
}

// sorted are checksums by table name.
func sorted(sums map[string]string) []result.TableChecksum {
	out := make([]result.TableChecksum, 0, len(sums))
	for t, s := range sums {
		out = append(out, result.TableChecksum{Table: t, Checksum: s})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Table < out[j].Table })
	return out
}

// CheckEmpty refuses an existing server whose database has a table or view: a replay
// drops every table there between points and when it ends, so it must find none it did
// not make. where names the server's option in the error.
func CheckEmpty(ctx context.Context, x *engine.External, where string) error {
	db, err := openMySQL(x.Conn())
	if err != nil {
		return err
	}
	defer db.Close()
	have, err := names(ctx, db, "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE()")
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	if len(have) > 0 {
		shown := have[:min(len(have), maxNamed)]
		return fmt.Errorf("%s: database %s already has %d table(s) or view(s) (%s): a replay loads its data there, and drops every table between points and when it ends; name an empty database in the DSN",
			where, x.DSN().DB, len(have), strings.Join(shown, ", "))
	}
	return nil
}
