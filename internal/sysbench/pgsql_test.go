package sysbench

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestPgSQLArgs(t *testing.T) {
	base := Options{Driver: DriverPgSQL, Workload: "oltp_read_only", Tables: 2, TableSize: 10000, Threads: 4,
		Time: 3 * time.Second, Host: "198.18.0.2", Port: 5432, User: "sbtest", Password: "pw", DB: "sbtest"}
	tests := []struct {
		name string
		o    Options
		want string
		env  string
	}{
		{"tcp plain", base,
			"oltp_read_only --db-driver=pgsql --pgsql-host=198.18.0.2 --pgsql-port=5432 --pgsql-user=sbtest --pgsql-password=pw --pgsql-db=sbtest --tables=2 --table-size=10000 --threads=4 --time=3 --report-interval=1 run",
			"PGSSLMODE=disable"},
		// sysbench has no TLS flag for pgsql: libpq takes sslmode from the environment.
		{"tcp tls", func() Options { o := base; o.TLS = true; return o }(),
			"oltp_read_only --db-driver=pgsql --pgsql-host=198.18.0.2 --pgsql-port=5432 --pgsql-user=sbtest --pgsql-password=pw --pgsql-db=sbtest --tables=2 --table-size=10000 --threads=4 --time=3 --report-interval=1 run",
			"PGSSLMODE=require"},
		// libpq's host may be the socket directory; the port names the socket file.
		{"socket", func() Options { o := base; o.Socket = "/lab/srv/run"; return o }(),
			"oltp_read_only --db-driver=pgsql --pgsql-host=/lab/srv/run --pgsql-port=5432 --pgsql-user=sbtest --pgsql-password=pw --pgsql-db=sbtest --tables=2 --table-size=10000 --threads=4 --time=3 --report-interval=1 run",
			"PGSSLMODE=disable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.o.validate(); err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(tt.o.Args("run"), " "); got != tt.want {
				t.Errorf("Args:\n got %s\nwant %s", got, tt.want)
			}
			if got := strings.Join(tt.o.Env(), " "); got != tt.env {
				t.Errorf("Env = %q, want %q", got, tt.env)
			}
		})
	}
	if env := (Options{Workload: "oltp_read_only", TLS: true}).Env(); env != nil {
		t.Errorf("mysql Env = %q, want nothing", env)
	}
}

func TestPgSQLValidate(t *testing.T) {
	comp := Options{Driver: DriverPgSQL, Workload: "oltp_read_only", Compression: true}
	if err := comp.validate(); !errors.Is(err, ErrBadOptions) || !strings.Contains(err.Error(), "not available on PostgreSQL") {
		t.Errorf("compression on pgsql: %v", err)
	}
	if err := (Options{Driver: "oracle", Workload: "oltp_read_only"}).validate(); !errors.Is(err, ErrBadOptions) {
		t.Errorf("unknown driver: %v", err)
	}
	// TLS needs no cert files with pgsql.
	if err := (Options{Driver: DriverPgSQL, Workload: "oltp_read_only", TLS: true}).validate(); err != nil {
		t.Errorf("pgsql TLS without CertDir: %v", err)
	}
}

func TestParsePgSQLCaptures(t *testing.T) {
	tests := []struct {
		file string
		want Summary
	}{
		{"pgsql_ro_plain.txt", Summary{Threads: 4, Read: 59948, Other: 8564, Transactions: 4282, TPS: 1346.80,
			Queries: 68512, QPS: 21548.75, TotalTimeS: 3.1787, Events: 4282, LatMin: 0.40, LatAvg: 2.91,
			LatMax: 188.34, LatPct: 7.84, Percentile: 95, LatSum: 12465.01}},
		{"pgsql_ro_tls.txt", Summary{Threads: 4, Read: 53788, Other: 7684, Transactions: 3842, TPS: 1250.17,
			Queries: 61472, QPS: 20002.67, TotalTimeS: 3.0725, Events: 3842, LatMin: 0.50, LatAvg: 3.15,
			LatMax: 219.64, LatPct: 7.98, Percentile: 95, LatSum: 12118.21}},
		// Deadlocks and unique violations are ignored errors with pgsql too.
		{"pgsql_wo_plain.txt", Summary{Threads: 4, Write: 52042, Other: 26214, Transactions: 13014, TPS: 4305.58,
			Queries: 78256, QPS: 25890.38, Errors: 43, TotalTimeS: 3.0219, Events: 13014, LatMin: 0.11, LatAvg: 0.92,
			LatMax: 163.71, LatPct: 2.43, Percentile: 95, LatSum: 12000.11}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got, err := ParseSummary(readTestdata(t, tt.file))
			if err != nil || got != tt.want {
				t.Errorf("ParseSummary:\n got %+v, %v\nwant %+v", got, err, tt.want)
			}
		})
	}
	out := readTestdata(t, "pgsql_err_password.txt")
	if _, err := ParseSummary(out); !errors.Is(err, ErrNoSummary) {
		t.Errorf("wrong password: err = %v, want ErrNoSummary", err)
	}
	err := describeFailure("run", errors.New("exit status 1"), out, "")
	if !errors.Is(err, ErrConnect) || !strings.Contains(err.Error(), `password authentication failed for user "sbtest"`) {
		t.Errorf("describeFailure = %v, want ErrConnect naming libpq's reason", err)
	}
	var n int
	for _, l := range strings.Split(readTestdata(t, "pgsql_ro_plain.txt"), "\n") {
		if iv, ok := ParseInterval(l); ok {
			n++
			if iv.TPS <= 0 || iv.Percentile != 95 {
				t.Errorf("interval %+v", iv)
			}
		}
	}
	if n != 3 {
		t.Errorf("%d intervals, want 3", n)
	}
}

func TestRedactPgSQLPassword(t *testing.T) {
	got := strings.Join(redact([]string{"sysbench", "--pgsql-password=secret", "--mysql-password=secret", "--pgsql-user=u"}), " ")
	if strings.Contains(got, "secret") || !strings.Contains(got, "--pgsql-password=*** --mysql-password=***") {
		t.Errorf("redact = %s", got)
	}
}
