package syncrep

import (
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/link"
)

// syncOptions parses args as study sync's own and link's flags and checks them for k.
func syncOptions(t *testing.T, k engine.Kind, args ...string) (Options, error) {
	t.Helper()
	fs := flag.NewFlagSet("study sync", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f, wire := AddFlags(fs), link.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return f.Options(k, wire)
}

func TestFlagsOptions(t *testing.T) {
	o, err := syncOptions(t, engine.MariaDB, "--rtts", "0,1.5ms,20ms", "--threads", "1,8", "--rate", "100mbit")
	if err != nil {
		t.Fatal(err)
	}
	if o.RTTList() != "0,1.5ms,20ms" || len(o.Modes) != len(ModesFor(engine.MariaDB)) || o.Link.RateBps != 100e6 ||
		o.WorkloadText() != "sysbench oltp_write_only on 4 × 10000 rows" {
		t.Errorf("options %+v: rtts %s, workload %s", o, o.RTTList(), o.WorkloadText())
	}
	o, err = syncOptions(t, engine.Postgres, "--workload", "tpcb-like", "--scale", "8")
	if err != nil || o.Tables != 0 || o.Scale != 8 || o.WorkloadText() != "pgbench tpcb-like at scale 8" {
		t.Errorf("pgbench: %+v, %v", o, err)
	}
	for _, c := range []struct {
		k    engine.Kind
		args []string
		want string
	}{
		{engine.MariaDB, []string{"--rtt", "20ms"}, "--rtt sets one round trip; this study sweeps --rtts"},
		{engine.MariaDB, []string{"--delay", "10ms"}, "--delay sets one round trip"},
		{engine.MariaDB, []string{"--scale", "3"}, "--scale is pgbench's data set"},
		{engine.Postgres, []string{"--workload", "simple-update", "--tables", "2"}, "--tables is sysbench's"},
		{engine.MariaDB, []string{"--threads", "0"}, "--threads"},
		{engine.MariaDB, []string{"--buffer-pool", "1GB"}, `--buffer-pool "1GB"`},
	} {
		if _, err := syncOptions(t, c.k, c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %v: %v, want %q", c.k, c.args, err, c.want)
		}
	}
}
