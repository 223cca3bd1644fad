package replaystudy

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/querylog"
)

// Real captures of MariaDB 10.11 and PostgreSQL 15 (package querylog's fixtures): the
// mixed general log has a session whose login failed (27, its Connect at line 25).
const (
	mixedLog    = "../querylog/testdata/mariadb-general-mixed.log"
	sysbenchLog = "../querylog/testdata/mariadb-general-sysbench.log"
	pgLog       = "../querylog/testdata/pg-stderr-sysbench.log"
)

const generalHead = "/usr/sbin/mariadbd, Version: 10.11.19-MariaDB. started with:\n" +
	"Tcp port: 3306  Unix socket: /run/mysqld/mysqld.sock\n" +
	"Time\t\t    Id Command\tArgument\n"

func writeLog(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "x.log")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCheckLogReadsCaptures(t *testing.T) {
	for _, c := range []struct {
		path       string
		format     querylog.Format
		engine     engine.Kind
		sessions   int64
		statements int64
	}{
		{sysbenchLog, querylog.MySQLGeneral, engine.MariaDB, 4, 204},
		{pgLog, querylog.PGStderr, engine.Postgres, 2, 140},
	} {
		info, err := CheckLog(context.Background(), c.path, LogChecks{})
		if err != nil {
			t.Fatalf("%s: %v", c.path, err)
		}
		if info.Format != c.format || info.Engine != c.engine || info.Scan.Sessions != c.sessions ||
			info.Scan.Statements != c.statements || !filepath.IsAbs(info.Path) {
			t.Errorf("%s: %s %s %s, %d sessions, %d statements; want %s %s, %d, %d",
				c.path, info.Path, info.Format, info.Engine, info.Scan.Sessions, info.Scan.Statements, c.format, c.engine, c.sessions, c.statements)
		}
	}
}

// TestCheckLogRefuses: each log that cannot be replayed is refused before anything is
// built, naming the file and the line (or what to give to go on).
func TestCheckLogRefuses(t *testing.T) {
	good := generalHead + "261208  0:11:56\t    26 Connect\tsbtest@198.18.1.2 on sbtest using TCP/IP\n\t\t    26 Query\tselect 1\n"
	cases := []struct {
		name   string
		path   string
		checks LogChecks
		want   error
		says   []string
	}{
		{"binary", writeLog(t, "select 1\nx\x00\x01"), LogChecks{}, querylog.ErrBinary, []string{"line 2"}},
		{"unknown format", writeLog(t, "hello\nworld\n"), LogChecks{}, querylog.ErrUnknownFormat, []string{"line 1", "--format"}},
		{"wrong format named", sysbenchLog, LogChecks{Format: querylog.PGCSV}, nil, []string{"line 1", "--skip-bad-lines"}},
		{"truncated line", writeLog(t, good+"\t\t    26 Query\tselect 2"), LogChecks{}, nil, []string{"line 6", "ends mid-line", "--skip-bad-lines"}},
		{"garbage line", writeLog(t, generalHead+"garbage\n"+good[len(generalHead):]), LogChecks{Format: querylog.MySQLGeneral}, nil, []string{"line 4", "not a general-log entry", "--skip-bad-lines"}},
		{"never connected", mixedLog, LogChecks{}, nil, []string{"1 session(s) never connected", "session 27 at line 25", "--skip-failed-logins"}},
		{"no statement", writeLog(t, generalHead+"261208  0:11:56\t    26 Connect\tsbtest@198.18.1.2 on sbtest using TCP/IP\n\t\t    26 Quit\t\n"),
			LogChecks{}, nil, []string{"no statement to replay in 5 lines"}},
		{"missing", filepath.Join(t.TempDir(), "none.log"), LogChecks{}, os.ErrNotExist, nil},
		{"directory", t.TempDir(), LogChecks{}, nil, []string{"not a regular file"}},
	}
	for _, c := range cases {
		_, err := CheckLog(context.Background(), c.path, c.checks)
		if err == nil || (c.want != nil && !errors.Is(err, c.want)) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
			continue
		}
		for _, s := range c.says {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%s: %q does not say %q", c.name, err, s)
			}
		}
	}
}

// TestCheckLogSkips: what a flag lets through is read on and counted.
func TestCheckLogSkips(t *testing.T) {
	info, err := CheckLog(context.Background(), mixedLog, LogChecks{SkipFailedLogins: true})
	if err != nil || info.Scan.NeverConnectedCount != 1 || info.Scan.Statements != 14 {
		t.Errorf("--skip-failed-logins: %v %+v", err, info)
	}
	good := generalHead + "261208  0:11:56\t    26 Connect\tsbtest@198.18.1.2 on sbtest using TCP/IP\n\t\t    26 Query\tselect 1\n"
	info, err = CheckLog(context.Background(), writeLog(t, generalHead+"garbage\n"+good[len(generalHead):]), LogChecks{Format: querylog.MySQLGeneral, SkipBadLines: true})
	if err != nil || info.Scan.BadLines != 1 || info.Scan.Statements != 1 {
		t.Errorf("--skip-bad-lines: %v %+v", err, info)
	}
}
