package replaystudy

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/querylog"
	"github.com/wirelab/wirelab/internal/replay"
)

func mariadbLog() *LogInfo {
	return &LogInfo{Path: "/logs/general.log", Format: querylog.MySQLGeneral, Engine: engine.MariaDB,
		Scan: &replay.ScanResult{Sessions: 4, Statements: 204, Span: 10 * time.Second}}
}

func pgLogInfo() *LogInfo {
	return &LogInfo{Path: "/logs/postgresql.log", Format: querylog.PGStderr, Engine: engine.Postgres,
		Scan: &replay.ScanResult{Sessions: 2, Statements: 140, Span: 4 * time.Second}}
}

func options(t *testing.T, log *LogInfo, args ...string) (Options, error) {
	t.Helper()
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	f := AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return f.Options(log)
}

func dumpFile(t *testing.T, head string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "app.sql")
	if err := os.WriteFile(p, []byte(head+"\nCREATE TABLE t (id int primary key);\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestOptionsFromFlags(t *testing.T) {
	o, err := options(t, mariadbLog(), "--prepare-sysbench", "--tables", "2", "--table-size", "1000", "--speed", "max", "--for", "30s",
		"--series", "plain,compression,tls+compression,tunnel", "--checksums")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range o.Series {
		names = append(names, s.Name())
	}
	if strings.Join(names, ",") != "plain,compression,compression+tls,tunnel" || o.Speed != replay.SpeedMax || o.For != 30*time.Second ||
		o.Data != (Data{Sysbench: true, Tables: 2, TableSize: 1000}) || !o.Checksums || !o.CheckWire || o.BufferPool != "512M" {
		t.Errorf("options %+v, series %v", o, names)
	}
	if !o.UsesTunnel() || !o.UsesTLS() {
		t.Errorf("tunnel %v, tls %v: want both", o.UsesTunnel(), o.UsesTLS())
	}
	dump := dumpFile(t, "-- MariaDB dump 10.19")
	o, err = options(t, mariadbLog(), "--dump", dump, "--tls", "--channel", "tunnel")
	if err != nil || o.Data.Dump != dump || len(o.Series) != 1 || o.Series[0] != (Series{TLS: true, Tunnel: true}) || o.Speed != 1 {
		t.Errorf("one series from --tls --channel tunnel: %+v %v", o, err)
	}
	o, err = options(t, pgLogInfo(), "--dump", dumpFile(t, "--\n-- PostgreSQL database dump\n--"))
	if err != nil || o.Series[0] != (Series{}) || o.Series[0].Name() != "plain" {
		t.Errorf("a pg_dump for a PostgreSQL log: %+v %v", o, err)
	}
}

// TestOptionsRefuse: every flag that cannot work is refused, naming it.
func TestOptionsRefuse(t *testing.T) {
	dir := t.TempDir()
	pgDump := dumpFile(t, "--\n-- PostgreSQL database dump\n--")
	myDump := dumpFile(t, "-- MySQL dump 10.13")
	archive := filepath.Join(dir, "app.dump")
	os.WriteFile(archive, []byte("PGDMP\x01\x0e\x00"), 0o644)
	for _, c := range []struct {
		log  *LogInfo
		args []string
		says string
	}{
		{mariadbLog(), nil, "no data to replay onto: give --dump"},
		{mariadbLog(), []string{"--dump", myDump, "--prepare-sysbench"}, "both given"},
		{mariadbLog(), []string{"--dump", myDump, "--tables", "2"}, "--tables sizes sysbench's tables"},
		{mariadbLog(), []string{"--dump", pgDump}, "a pg_dump file, and the log is MariaDB's"},
		{pgLogInfo(), []string{"--dump", myDump}, "a MySQL/MariaDB dump, and the log is PostgreSQL's"},
		{pgLogInfo(), []string{"--dump", archive}, "pg_dump -Fp"},
		{mariadbLog(), []string{"--dump", filepath.Join(dir, "none.sql")}, "--dump"},
		{mariadbLog(), []string{"--dump", dir}, "not a regular file"},
		{mariadbLog(), []string{"--prepare-sysbench", "--tables", "0"}, "--tables 0"},
		{mariadbLog(), []string{"--prepare-sysbench", "--series", "plain", "--tls"}, "--tls and --series both given"},
		{mariadbLog(), []string{"--prepare-sysbench", "--series", "plain,plain"}, "plain is named twice"},
		{mariadbLog(), []string{"--prepare-sysbench", "--series", "tls+plain"}, "combines with nothing"},
		{mariadbLog(), []string{"--prepare-sysbench", "--series", "zstd"}, `unknown word "zstd"`},
		{mariadbLog(), []string{"--prepare-sysbench", "--series", ","}, "--series"},
		{pgLogInfo(), []string{"--prepare-sysbench", "--series", "plain,compression"}, "PostgreSQL has no protocol compression"},
		{pgLogInfo(), []string{"--prepare-sysbench", "--compression"}, "PostgreSQL has no protocol compression"},
		{mariadbLog(), []string{"--prepare-sysbench", "--channel", "socks"}, "--channel"},
		{mariadbLog(), []string{"--prepare-sysbench", "--speed", "0"}, "--speed"},
		{mariadbLog(), []string{"--prepare-sysbench", "--speed", "fast"}, "--speed"},
		{mariadbLog(), []string{"--prepare-sysbench", "--for", "-1s"}, "--for"},
		{mariadbLog(), []string{"--prepare-sysbench", "--buffer-pool", "lots"}, "--buffer-pool"},
	} {
		_, err := options(t, c.log, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%v: %v, want it to say %q", c.args, err, c.says)
		}
	}
}

func TestLogChecksFormat(t *testing.T) {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	f := AddFlags(fs)
	fs.Parse([]string{"--format", "mysql-binlog", "--skip-bad-lines"})
	if _, err := f.LogChecks(); err == nil || !strings.Contains(err.Error(), "--format") || !strings.Contains(err.Error(), "pg-csv") {
		t.Errorf("unknown format: %v", err)
	}
	fs.Parse([]string{"--format", "pg-csv", "--skip-failed-logins"})
	if c, err := f.LogChecks(); err != nil || c != (LogChecks{Format: querylog.PGCSV, SkipBadLines: true, SkipFailedLogins: true}) {
		t.Errorf("checks %+v %v", c, err)
	}
}
