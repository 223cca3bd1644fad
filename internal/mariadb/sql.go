package mariadb

import (
	"context"
	"fmt"
	"strings"

	"github.com/wirelab/wirelab/internal/dbserver"
)

// clientArgs is the mariadb client command line for one batch of SQL over the socket as
// root (unix_socket auth: the OS user root is MariaDB's root). --no-defaults must be first
// so /etc/mysql/my.cnf (and its socket path) is never read.
func clientArgs(socket, sql string, header bool) []string {
	args := []string{"--no-defaults", "--protocol=socket", "--socket=" + socket, "--user=root",
		"--batch", "--raw", "--connect-timeout=5",
		// The 10.11 client turns TLS on by default, even over the socket: pointless work.
		"--skip-ssl"}
	if !header {
		args = append(args, "--skip-column-names")
	}
	return append(args, "--execute="+sql)
}

func (s *Server) run(ctx context.Context, sql string, header bool) (string, error) {
	return dbserver.RunClient(ctx, s.runner, "mariadb exec", sql, "mariadb", clientArgs(s.Socket, sql, header)...)
}

// Exec runs sql (one or more statements, one session) as root over the unix socket and
// returns the client's batch output: one line per row, tab-separated, without a header.
func (s *Server) Exec(ctx context.Context, sql string) (string, error) {
	return s.run(ctx, sql, false)
}

// Rows runs a query and returns its rows as column-name -> value maps (NULL is "NULL").
func (s *Server) Rows(ctx context.Context, sql string) ([]map[string]string, error) {
	return dbserver.Rows(s.run(ctx, sql, true))
}

// bootstrap drops anonymous users, creates the bench user and database and reads the
// version. Nothing here goes to the binlog: every server of a replication pair sets up
// its own users, and a replicated CREATE USER of an existing user would stop the replica.
func (s *Server) bootstrap(ctx context.Context, wantConns int) error {
	pw, err := dbserver.RandomPassword()
	if err != nil {
		return fmt.Errorf("bootstrap users: %w", err)
	}
	anon, err := s.Exec(ctx, "SELECT Host FROM mysql.user WHERE User=''")
	if err != nil {
		return fmt.Errorf("bootstrap users: %w", err)
	}
	var b strings.Builder
	b.WriteString("SET SESSION sql_log_bin=0;\n")
	for _, h := range strings.Fields(anon) {
		fmt.Fprintf(&b, "DROP USER IF EXISTS ''@%s;\n", quote(h))
	}
	fmt.Fprintf(&b, "CREATE DATABASE IF NOT EXISTS %s;\n", ident(BenchDB))
	// '%' covers TCP from every lab host; 'localhost' is the socket. No REQUIRE SSL: the
	// same user is used with and without TLS.
	for _, host := range []string{"%", "localhost"} {
		u := quote(BenchUser) + "@" + quote(host)
		fmt.Fprintf(&b, "CREATE OR REPLACE USER %s IDENTIFIED BY %s;\n", u, quote(pw))
		fmt.Fprintf(&b, "GRANT ALL PRIVILEGES ON %s.* TO %s;\n", ident(BenchDB), u)
	}
	b.WriteString("FLUSH PRIVILEGES;\n")
	if _, err := s.Exec(ctx, b.String()); err != nil {
		return fmt.Errorf("bootstrap users: %w", err)
	}
	s.Password = pw

	out, err := s.Exec(ctx, "SELECT VERSION(), @@max_connections")
	if err != nil {
		return fmt.Errorf("read version: %w", err)
	}
	s.Version = dbserver.VersionRow(out, wantConns, s.logger, "mariadb lowered max_connections (file descriptor limit?)")
	return nil
}

// quote makes a single-quoted SQL string literal.
func quote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\x00", `\0`, "\n", `\n`, "\r", `\r`)
	return "'" + r.Replace(s) + "'"
}

// ident makes a backquoted identifier.
func ident(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }
