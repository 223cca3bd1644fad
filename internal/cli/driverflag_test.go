package cli

import (
	"flag"
	"io"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/study"
)

// What `run` hands the study engine for each driver: pgbench's default script when no
// --workload is given, the threads as clients, the scale as its data set.
func TestDriverFlagsReachTheBench(t *testing.T) {
	tests := []struct {
		args []string
		want study.Bench
	}{
		{[]string{"--engine", "postgres", "--driver", "pgbench"},
			study.Bench{Driver: "pgbench", Workload: "tpcb-like", Scale: 10}},
		{[]string{"--engine", "postgres", "--driver", "pgbench", "--workload", "select-only", "--scale", "3"},
			study.Bench{Driver: "pgbench", Workload: "select-only", Scale: 3}},
		{[]string{"--engine", "postgres"}, study.Bench{Driver: "sysbench", Workload: "oltp_read_only"}},
		{nil, study.Bench{Driver: "sysbench", Workload: "oltp_read_only"}},
	}
	for _, tt := range tests {
		fs := flag.NewFlagSet("run", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		bf := addBenchFlags(fs, "10", 10*time.Second, 2*time.Second, 4, 100000)
		args := append([]string{"--threads", "10", "--out", t.TempDir()}, tt.args...)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		spec, err := bf.validate(&Process{}, "run")
		if err != nil {
			t.Errorf("%v: %v", tt.args, err)
			continue
		}
		b := bf.bench(spec, "")
		if b.Driver != tt.want.Driver || b.Workload != tt.want.Workload || b.Scale != tt.want.Scale ||
			len(b.Threads) != 1 || b.Threads[0] != 10 {
			t.Errorf("%v: bench %+v, want driver %s workload %s scale %d", tt.args, b, tt.want.Driver, tt.want.Workload, tt.want.Scale)
		}
	}
}
