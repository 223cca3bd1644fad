package replication

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/wirelab/wirelab/internal/mariadb"
)

// Open connects to a lab server as its bench user over the unix socket. The socket is a
// file, so this works from the host namespace and never touches the wire.
func Open(s *mariadb.Server) (*sql.DB, error) {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd = s.User, s.Password
	cfg.Net, cfg.Addr = "unix", s.Socket
	cfg.DBName = s.DB
	cfg.Timeout = 5 * time.Second
	cfg.ReadTimeout = 60 * time.Second
	cfg.WriteTimeout = 60 * time.Second
	cfg.InterpolateParams = true
	c, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", s.Socket, err)
	}
	db := sql.OpenDB(c)
	db.SetMaxOpenConns(4)
	db.SetConnMaxIdleTime(time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("connect to %s as %s: %w", s.Socket, s.User, err)
	}
	return db, nil
}

// Tables are sysbench's table names for n tables.
func Tables(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("sbtest%d", i+1)
	}
	return out
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

// CompareChecksums returns "" when every table has the same non-NULL checksum on both
// sides, or a short description of the first differences.
func CompareChecksums(tables []string, src, rep map[string]string) string {
	var diffs []string
	for _, t := range tables {
		s, r := src[t], rep[t]
		switch {
		case s == "" || s == "NULL":
			diffs = append(diffs, t+": no checksum on the source")
		case s != r:
			diffs = append(diffs, fmt.Sprintf("%s: source %s, replica %s", t, s, orNone(r)))
		}
	}
	if len(diffs) > 3 {
		diffs = append(diffs[:3], fmt.Sprintf("and %d more", len(diffs)-3))
	}
	return strings.Join(diffs, "; ")
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func quoteIdents(ns []string) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = "`" + strings.ReplaceAll(n, "`", "``") + "`"
	}
	return out
}

var binlogName = regexp.MustCompile(`^mysql-bin\.[0-9]{6,}$`)

// BinlogBytes is the total size of the binary logs in a server's datadir (mysql-bin.NNNNNN,
// as lab servers name them); its growth over a point is the binlog rate.
func BinlogBytes(dataDir string) (int64, error) {
	ents, err := os.ReadDir(dataDir)
	if err != nil {
		return 0, fmt.Errorf("binlog size: %w", err)
	}
	var n int64
	for _, e := range ents {
		if !binlogName.MatchString(e.Name()) {
			continue
		}
		fi, err := os.Stat(filepath.Join(dataDir, e.Name()))
		if err != nil {
			return 0, fmt.Errorf("binlog size: %w", err)
		}
		n += fi.Size()
	}
	return n, nil
}
