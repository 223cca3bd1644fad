package sysbench

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestArgs(t *testing.T) {
	base := Options{Workload: "oltp_read_only", Tables: 2, TableSize: 10000, Threads: 16,
		Time: 2500 * time.Millisecond, Host: "198.18.0.2", Port: 3306,
		User: "sbtest", Password: "pw", DB: "sbtest"}
	tests := []struct {
		name string
		o    Options
		cmd  string
		want string
	}{
		{"run over TCP", base, "run",
			"oltp_read_only --db-driver=mysql --mysql-host=198.18.0.2 --mysql-port=3306 --mysql-user=sbtest --mysql-password=pw --mysql-db=sbtest --tables=2 --table-size=10000 --threads=16 --time=3 --report-interval=1 run"},
		{"prepare drops run-only options", func() Options {
			o := base
			o.Rate, o.Events, o.RandType, o.ReportInterval = 100, 5, "uniform", 5
			return o
		}(), "prepare",
			"oltp_read_only --db-driver=mysql --mysql-host=198.18.0.2 --mysql-port=3306 --mysql-user=sbtest --mysql-password=pw --mysql-db=sbtest --tables=2 --table-size=10000 --threads=16 prepare"},
		{"socket wins over host, TLS and compression, extras last", func() Options {
			o := base
			o.Socket, o.TLS, o.Compression, o.CertDir = "/lab/db/mysqld.sock", true, true, "/lab/db/certs"
			o.Extra = []string{"--point-selects=25", "--skip-trx=on"}
			o.ReportInterval = -1
			return o
		}(), "run",
			"oltp_read_only --db-driver=mysql --mysql-socket=/lab/db/mysqld.sock --mysql-user=sbtest --mysql-password=pw --mysql-db=sbtest --mysql-ssl=on --mysql-compression=on --tables=2 --table-size=10000 --threads=16 --time=3 --point-selects=25 --skip-trx=on run"},
		{"events without time sets --time=0", Options{Workload: "oltp_point_select", Events: 1000, Rate: 50, RandType: "pareto", ReportInterval: 2}, "run",
			"oltp_point_select --db-driver=mysql --time=0 --events=1000 --rate=50 --report-interval=2 --rand-type=pareto run"},
		{"histogram, counters reset after the warm-up", func() Options {
			o := base
			o.Histogram, o.ResetAfter = true, 2*time.Second
			return o
		}(), "run",
			"oltp_read_only --db-driver=mysql --mysql-host=198.18.0.2 --mysql-port=3306 --mysql-user=sbtest --mysql-password=pw --mysql-db=sbtest --tables=2 --table-size=10000 --threads=16 --time=3 --report-interval=1 --histogram=on --report-checkpoints=2 run"},
		{"histogram and reset are run-only", func() Options {
			o := base
			o.Histogram, o.ResetAfter = true, 2*time.Second
			return o
		}(), "prepare",
			"oltp_read_only --db-driver=mysql --mysql-host=198.18.0.2 --mysql-port=3306 --mysql-user=sbtest --mysql-password=pw --mysql-db=sbtest --tables=2 --table-size=10000 --threads=16 prepare"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := strings.Join(tt.o.Args(tt.cmd), " "); got != tt.want {
				t.Errorf("Args(%q):\n got %s\nwant %s", tt.cmd, got, tt.want)
			}
		})
	}
}

func TestPrepareOptionsThreads(t *testing.T) {
	for _, tc := range []struct{ tables, threads, want int }{
		{0, 64, 1}, {2, 64, 2}, {8, 1, 8}, {32, 2048, 8},
	} {
		got := prepareOptions(Options{Tables: tc.tables, Threads: tc.threads}).Threads
		if got != tc.want {
			t.Errorf("tables=%d threads=%d: prepare threads = %d, want %d", tc.tables, tc.threads, got, tc.want)
		}
	}
}

func TestValidate(t *testing.T) {
	for _, o := range []Options{{}, {Workload: "oltp_read_only", TLS: true}} {
		if err := o.validate(); !errors.Is(err, ErrBadOptions) {
			t.Errorf("validate(%+v) = %v, want ErrBadOptions", o, err)
		}
	}
	certs := t.TempDir()
	if err := (Options{Workload: "oltp_read_only", TLS: true, CertDir: certs}).validate(); !errors.Is(err, ErrBadOptions) ||
		!strings.Contains(err.Error(), "client-key.pem") {
		t.Errorf("TLS without the .pem files: err = %v", err)
	}
	writeTLSFiles(t, certs)
	if err := (Options{Workload: "oltp_read_only", TLS: true, CertDir: certs}).validate(); err != nil {
		t.Errorf("valid options rejected: %v", err)
	}
}

func TestParseVersion(t *testing.T) {
	for in, want := range map[string]string{
		"sysbench 1.0.20\n": "1.0.20",
		"sysbench 1.1.0-df89d34 (using bundled LuaJIT 2.1.0-beta3)\n": "1.1.0-df89d34",
	} {
		if got, err := parseVersion(in); err != nil || got != want {
			t.Errorf("parseVersion(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := parseVersion("bash: sysbench: not found"); err == nil {
		t.Error("parseVersion accepted garbage")
	}
}

func writeTLSFiles(t *testing.T, dir string) {
	t.Helper()
	for _, f := range TLSFiles {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func TestTableNames(t *testing.T) {
	if got := TableNames(3); strings.Join(got, ",") != "sbtest1,sbtest2,sbtest3" {
		t.Errorf("TableNames(3) = %v", got)
	}
}
