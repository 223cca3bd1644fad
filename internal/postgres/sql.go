package postgres

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/wirelab/wirelab/internal/dbserver"
)

// psqlArgs is the psql command line that runs each statement (one -c each, so every
// statement is its own transaction: CREATE DATABASE cannot run inside one) as the
// superuser over the socket. -X skips ~/.psqlrc; unaligned, tab-separated output without
// footers; NULL prints as "NULL" like the mariadb client's batch mode.
func psqlArgs(socketDir string, port int, db string, header bool, stmts ...string) []string {
	args := []string{"-X", "-q", "--no-password", "-v", "ON_ERROR_STOP=1", "-A", "-F", "\t",
		"-P", "footer=off", "-P", "null=NULL",
		"-h", socketDir, "-p", strconv.Itoa(port), "-U", superUser, "-d", db}
	if !header {
		args = append(args, "-t")
	}
	for _, s := range stmts {
		args = append(args, "-c", s)
	}
	return args
}

// psql runs statements in database db as the superuser: psql runs as the OS user, whom
// pg_hba.conf lets in by peer authentication over the socket.
func (s *Server) psql(ctx context.Context, db string, header bool, stmts ...string) (string, error) {
	name, args := asUser(s.osUser, filepath.Join(s.binDir, "psql"), psqlArgs(s.SocketDir, s.Port, db, header, stmts...)...)
	return dbserver.RunClient(ctx, s.runner, "psql", strings.Join(stmts, "; "), name, args...)
}

// Exec runs statements, each in its own transaction, as the superuser in the bench
// database and returns psql's output: one line per row of the last result that has rows,
// tab-separated, without a header.
func (s *Server) Exec(ctx context.Context, stmts ...string) (string, error) {
	return s.psql(ctx, s.DB, false, stmts...)
}

// Rows runs one query in the bench database and returns its rows as column-name -> value
// maps (NULL is "NULL").
func (s *Server) Rows(ctx context.Context, query string) ([]map[string]string, error) {
	return dbserver.Rows(s.psql(ctx, s.DB, true, query))
}

// bootstrap creates (or, on a reused datadir, re-passwords) the bench role and its
// database, and reads the version. The role owns the database, so it may create the
// benchmark tables in its public schema (PostgreSQL 15 no longer lets everyone).
func (s *Server) bootstrap(ctx context.Context, wantConns int) error {
	pw, err := dbserver.RandomPassword()
	if err != nil {
		return fmt.Errorf("bootstrap users: %w", err)
	}
	role := ident(BenchUser)
	stmts := []string{
		fmt.Sprintf("DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = %s) THEN CREATE ROLE %s; END IF; END $$",
			quote(BenchUser), role),
		fmt.Sprintf("ALTER ROLE %s LOGIN PASSWORD %s", role, quote(pw)),
		fmt.Sprintf("SELECT count(*) FROM pg_database WHERE datname = %s", quote(BenchDB)),
	}
	out, err := s.psql(ctx, superUser, false, stmts...)
	if err != nil {
		return fmt.Errorf("bootstrap users: %w", err)
	}
	if strings.TrimSpace(out) == "0" {
		if _, err := s.psql(ctx, superUser, false, fmt.Sprintf("CREATE DATABASE %s OWNER %s", ident(BenchDB), role)); err != nil {
			return fmt.Errorf("bootstrap database: %w", err)
		}
	}
	s.Password = pw
	return s.readVersion(ctx, wantConns)
}

// readVersion sets Version and warns when the server runs with fewer connections than
// asked for.
func (s *Server) readVersion(ctx context.Context, wantConns int) error {
	out, err := s.psql(ctx, superUser, false, "SELECT current_setting('server_version'), current_setting('max_connections')")
	if err != nil {
		return fmt.Errorf("read version: %w", err)
	}
	s.Version = "PostgreSQL " + dbserver.VersionRow(out, wantConns, s.logger, "postgres runs with fewer connections than asked")
	return nil
}

// quote makes a single-quoted SQL string literal (standard_conforming_strings is on).
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// ident makes a double-quoted identifier.
func ident(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
