package replaystudy

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/lib/pq"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/execx"
	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/postgres"
	"github.com/wirelab/wirelab/internal/replication"
	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/study"
)

// postgresData is the data of the lab's PostgreSQL. Its snapshot is a database of its
// own made from the bench database as a template once the data is in; a reset drops the
// bench database and creates it again from that template: a file copy of the database,
// whatever it holds (schemas, sequences, functions), without replaying any SQL.
type postgresData struct {
	srv      *postgres.Server
	launcher execx.Launcher
	data     Data
	admin    *sql.DB // the bench role in the maintenance database: CREATE and DROP DATABASE
}

// pristineSuffix names the snapshot database: the bench database's name with it.
const pristineSuffix = "_replay_pristine"

// labPostgres is the data of the lab's PostgreSQL, administered as its bench role (which
// owns the bench database, and is let create databases) over the unix socket.
func labPostgres(e *study.Env, srv *engine.PostgresServer, d Data) (dataSet, error) {
	return &postgresData{srv: srv.Server, launcher: e.Backend.Launcher(lab.Server), data: d}, nil
}

// psqlLoad is psql running file into the bench database as the bench role, stopping at
// the first error (psql names its file and line).
func psqlLoad(binDir string, s *postgres.Server, file string) command {
	return command{name: filepath.Join(binDir, "psql"),
		args: []string{"-X", "-q", "--no-password", "-v", "ON_ERROR_STOP=1", "-h", s.SocketDir, "-p", strconv.Itoa(s.Port),
			"-U", s.User, "-d", s.DB, "-f", file},
		env: []string{"PGPASSWORD=" + s.Password}}
}

// pristineStatements make the snapshot database from the bench database.
func pristineStatements(db string) []string {
	return []string{"DROP DATABASE IF EXISTS " + pq.QuoteIdentifier(db+pristineSuffix),
		"CREATE DATABASE " + pq.QuoteIdentifier(db+pristineSuffix) + " TEMPLATE " + pq.QuoteIdentifier(db)}
}

// resetStatements make the bench database again from the snapshot; FORCE ends any
// session the replay left behind.
func resetStatements(db string) []string {
	return []string{"DROP DATABASE IF EXISTS " + pq.QuoteIdentifier(db) + " WITH (FORCE)",
		"CREATE DATABASE " + pq.QuoteIdentifier(db) + " TEMPLATE " + pq.QuoteIdentifier(db+pristineSuffix)}
}

func (p *postgresData) load(ctx context.Context) error {
	if p.data.Dump != "" {
		bin, err := postgres.FindBinDir()
		if err != nil {
			return err
		}
		c := psqlLoad(bin, p.srv, p.data.Dump)
		if _, stderr, err := p.launcher.Launch(ctx, execx.Streamed{Name: c.name, Args: c.args, Env: c.env}); err != nil {
			return fmt.Errorf("load --dump %s: %w: %s (a dump of another server's roles needs pg_dump --no-owner --no-privileges)",
				p.data.Dump, err, execx.LastLines(stderr, 5, " | "))
		}
	}
	// The bench role owns the bench database; creating the snapshot and the database again
	// needs CREATEDB, which only the superuser grants.
	if _, err := p.srv.Exec(ctx, "ALTER ROLE "+pq.QuoteIdentifier(p.srv.User)+" CREATEDB"); err != nil {
		return fmt.Errorf("let the bench role copy its database: %w", err)
	}
	admin, err := openPostgres(p.srv, "postgres")
	if err != nil {
		return err
	}
	p.admin = admin
	return p.exec(ctx, "keep the starting data", pristineStatements(p.srv.DB))
}

func (p *postgresData) reset(ctx context.Context) error {
	return p.exec(ctx, "reset the data", resetStatements(p.srv.DB))
}

func (p *postgresData) exec(ctx context.Context, what string, stmts []string) error {
	for _, s := range stmts {
		if _, err := p.admin.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("%s: %s: %w", what, s, err)
		}
	}
	return nil
}

// checksums are the bench database's tables in the search path's first schema (public),
// each in its primary key's order when the key is one column, else by its rows' sorted
// md5s (replication.PostgresChecksums): a handle of its own, closed before the next reset
// drops the database.
func (p *postgresData) checksums(ctx context.Context) ([]result.TableChecksum, error) {
	db, err := openPostgres(p.srv, p.srv.DB)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	tables, err := pgTables(ctx, db)
	if err != nil || len(tables) == 0 {
		return nil, err
	}
	sums, err := replication.PostgresChecksums(ctx, db, tables)
	if err != nil {
		return nil, err
	}
	return sorted(sums), nil
}

// pgTablesQuery lists the ordinary and partitioned tables of the current schema with
// their primary key's one column ("" for none, or a key of several).
const pgTablesQuery = `SELECT c.relname,
  COALESCE((SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
            WHERE i.indrelid = c.oid AND i.indisprimary AND i.indnkeyatts = 1), '')
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') ORDER BY c.relname`

// pgTables are the tables pgTablesQuery lists.
func pgTables(ctx context.Context, db *sql.DB) ([]replication.Table, error) {
	rows, err := db.QueryContext(ctx, pgTablesQuery)
	if err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	defer rows.Close()
	var out []replication.Table
	for rows.Next() {
		var t replication.Table
		if err := rows.Scan(&t.Name, &t.Key); err != nil {
			return nil, fmt.Errorf("list tables: %w", err)
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

func (p *postgresData) close(context.Context) error {
	if p.admin == nil {
		return nil
	}
	err := p.admin.Close()
	p.admin = nil
	return err
}

// openPostgres connects to database db of the lab's PostgreSQL s as its bench role over
// the unix socket (the SQL never touches the wire).
func openPostgres(s *postgres.Server, db string) (*sql.DB, error) {
	return replication.OpenPostgres(&postgres.Server{SocketDir: s.SocketDir, Port: s.Port, User: s.User, Password: s.Password, DB: db})
}
