package study

import (
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/engine"
)

// benchOf parses args as run's bench flags and checks them for k.
func benchOf(t *testing.T, k engine.Kind, studyName string, args ...string) (Bench, error) {
	t.Helper()
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := AddBenchFlags(fs, BenchDefaults{Threads: "10", Duration: 10 * time.Second, Warmup: 2 * time.Second, Tables: 4, TableSize: 100000})
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return f.Bench(k, studyName)
}

// What `run` hands the study engine for each driver: pgbench's default script when no
// --workload is given, the threads as clients, the scale as its data set.
func TestBenchFlagsDriver(t *testing.T) {
	tests := []struct {
		k    engine.Kind
		args []string
		want Bench
	}{
		{engine.Postgres, []string{"--driver", "pgbench"}, Bench{Driver: "pgbench", Workload: "tpcb-like", Scale: 10}},
		{engine.Postgres, []string{"--driver", "pgbench", "--workload", "select-only", "--scale", "3"}, Bench{Driver: "pgbench", Workload: "select-only", Scale: 3}},
		{engine.Postgres, nil, Bench{Driver: "sysbench", Workload: "oltp_read_only"}},
		{engine.MariaDB, nil, Bench{Driver: "sysbench", Workload: "oltp_read_only"}},
	}
	for _, tt := range tests {
		b, err := benchOf(t, tt.k, "run", tt.args...)
		if err != nil {
			t.Errorf("%v: %v", tt.args, err)
			continue
		}
		if b.Driver != tt.want.Driver || b.Workload != tt.want.Workload || b.Scale != tt.want.Scale ||
			len(b.Threads) != 1 || b.Threads[0] != 10 || b.Engine != tt.k || b.Tables != 4 || b.RandType != "pareto" {
			t.Errorf("%v: bench %+v, want driver %s workload %s scale %d", tt.args, b, tt.want.Driver, tt.want.Workload, tt.want.Scale)
		}
	}
}

// Every bad knob is refused naming its flag and what it accepts.
func TestBenchFlagsRefuse(t *testing.T) {
	for _, c := range []struct {
		k     engine.Kind
		study string
		args  []string
		want  string
	}{
		{engine.MariaDB, "run", []string{"--threads", "0"}, "--threads"},
		{engine.MariaDB, "run", []string{"--duration", "500ms"}, "--duration 500ms: want at least 1s"},
		{engine.MariaDB, "run", []string{"--warmup", "-1s"}, "--warmup -1s"},
		{engine.MariaDB, "run", []string{"--workload", "oltp_fast"}, `--workload "oltp_fast": with --driver sysbench want one of oltp_delete, oltp_insert`},
		{engine.MariaDB, "run", []string{"--workload", "select-only"}, "select-only is a pgbench script: add --driver pgbench --engine postgres"},
		{engine.MariaDB, "run", []string{"--scale", "3"}, "--scale is pgbench's data set"},
		{engine.MariaDB, "run", []string{"--driver", "hammerdb"}, `--driver "hammerdb": want sysbench or pgbench`},
		{engine.MariaDB, "run", []string{"--driver", "pgbench"}, "pgbench drives PostgreSQL only; add --engine postgres, or use --driver sysbench with MariaDB"},
		{engine.Postgres, "bandwidth", []string{"--driver", "pgbench"}, "study bandwidth runs sysbench only"},
		{engine.Postgres, "run", []string{"--driver", "pgbench", "--tables", "2"}, "--tables is sysbench's"},
		{engine.Postgres, "run", []string{"--driver", "pgbench", "--workload", "oltp_read_only"}, `--workload "oltp_read_only": with --driver pgbench want one of tpcb-like, select-only, simple-update`},
		{engine.Postgres, "run", []string{"--driver", "pgbench", "--scale", "0"}, "--scale 0: want 1..1000"},
		{engine.MariaDB, "run", []string{"--rand-type", "zipf"}, `--rand-type "zipf"`},
		{engine.MariaDB, "run", []string{"--tables", "0"}, "--tables 0: want 1..1000"},
		{engine.MariaDB, "run", []string{"--repeat", "0"}, "--repeat 0: want 1..100"},
		{engine.MariaDB, "run", []string{"--buffer-pool", "1GB"}, `--buffer-pool "1GB"`},
	} {
		if _, err := benchOf(t, c.k, c.study, c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %v: %v, want %q", c.k, c.args, err, c.want)
		}
	}
}
