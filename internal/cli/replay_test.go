package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Real captures (package querylog's fixtures): a MariaDB general log of sysbench, the
// same workload in PostgreSQL's stderr log, and a general log with a failed login.
const (
	replayLog      = "../querylog/testdata/mariadb-general-sysbench.log"
	replayPgLog    = "../querylog/testdata/pg-stderr-sysbench.log"
	replayMixedLog = "../querylog/testdata/mariadb-general-mixed.log"
)

// TestReplayBadInput: every bad flag, log or combination is refused with exit 2, naming
// the flag or the line, before anything runs.
func TestReplayBadInput(t *testing.T) {
	truncated := filepath.Join(t.TempDir(), "cut.log")
	b, _ := os.ReadFile(replayLog)
	os.WriteFile(truncated, append(b, "\t\t    15 Query\tselect 2"...), 0o644) // a last line cut short
	binary := filepath.Join(t.TempDir(), "bin.log")
	os.WriteFile(binary, []byte("\x7fELF\x02\x01\x01\x00"), 0o644)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--prepare-sysbench"}, "want one query log, got 0 arguments"},
		{[]string{replayLog, replayLog, "--prepare-sysbench"}, "want one query log, got 2 arguments"},
		{[]string{replayLog, "--prepare-sysbench", "--hosts", "hosts.yaml"}, "--hosts: a replay runs in the namespace lab"},
		{[]string{replayLog, "--prepare-sysbench", "--rtt", "0,20"}, "--rtt"},
		{[]string{replayLog, "--prepare-sysbench", "--rate", "1furlong"}, "--rate"},
		{[]string{replayLog, "--prepare-sysbench", "--format", "mysql-binlog"}, "--format"},
		{[]string{replayLog, "--prepare-sysbench", "--tunnel-compress", "lz5"}, "--tunnel-compress"},
		{[]string{truncated, "--prepare-sysbench"}, "ends mid-line"},
		{[]string{binary, "--prepare-sysbench"}, "binary file"},
		{[]string{replayMixedLog, "--prepare-sysbench"}, "session 27 at line 25"},
		{[]string{replayLog, "--prepare-sysbench", "--format", "pg-csv"}, "line 1"},
		{[]string{replayLog, "--prepare-sysbench", "--engine", "postgres"}, "--engine postgres, and"},
		{[]string{replayLog, "--prepare-sysbench", "--engine", "oracle"}, "--engine"},
		{[]string{replayLog}, "give --dump FILE.sql"},
		{[]string{replayPgLog, "--prepare-sysbench", "--compression"}, "PostgreSQL has no protocol compression"},
		{[]string{replayLog, "--prepare-sysbench", "--tunnel-compress", "zstd"}, "no series goes through it"},
		{[]string{replayPgLog, "--prepare-sysbench", "--server-dsn", "bench@tcp(198.18.250.1:3306)/wl"}, "--server-dsn names a MySQL/MariaDB server"},
		{[]string{replayLog, "--prepare-sysbench", "--server-password-file", "pw"}, "--server-password-file applies only with --server-dsn"},
		{[]string{replayLog, "--prepare-sysbench", "--tcp-congestion", "nosuchcc"}, "nosuchcc"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			assertUsage(t, append([]string{"replay", "--out", t.TempDir()}, c.args...), c.want)
		})
	}
}

// TestReplayNeedsRoot: a good command line reads the log, then asks for root before it
// touches the kernel.
func TestReplayNeedsRoot(t *testing.T) {
	p, _, errb, f := testProcess(t, false)
	code := Main([]string{"replay", replayLog, "--prepare-sysbench", "--rtt", "0,20ms", "--out", t.TempDir()}, p)
	if code != 1 || !strings.Contains(errb.String(), "root") || !strings.Contains(errb.String(), "reading "+replayLog) || len(f.Calls) > 0 {
		t.Errorf("exit %d, calls %v: %s", code, f.Calls, errb)
	}
}

func TestReplayHelp(t *testing.T) {
	p, _, errb, _ := testProcess(t, true)
	if code := Main([]string{"replay", "--help"}, p); code != 0 || !strings.Contains(errb.String(), "Example") ||
		!strings.Contains(errb.String(), "--series") || !strings.Contains(errb.String(), "docs/replay.md") {
		t.Errorf("exit %d:\n%s", code, errb)
	}
}
