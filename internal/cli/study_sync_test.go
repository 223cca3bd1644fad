package cli

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/syncrep"
)

func TestStudySyncBadInput(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--modes", "galera", "--rtts", "0,6s", "--semisync-timeout", "1m"}, "--rtts 0s,6s"},
		{[]string{"--engine", "postgres", "--modes", "galera-tuned"}, "galera-tuned is a MariaDB mode"},
		{[]string{"--modes", "pg-on"}, "pg-on is a PostgreSQL mode"},
		{[]string{"--engine", "postgres", "--modes", "semisync-after-sync"}, "semisync-after-sync is a MariaDB mode"},
		{[]string{"--modes", "turbo"}, `unknown mode "turbo"`},
		{[]string{"--rtts", "0,200ms", "--semisync-timeout", "1s"}, "--semisync-timeout 1s: want at least 10 × the largest --rtts (200ms)"},
		{[]string{"--rtts", "0,fast"}, "--rtts"},
		{[]string{"--rtt", "20ms"}, "this study sweeps --rtts"},
		{[]string{"--threads", "1,x"}, "--threads"},
		{[]string{"--workload", "tpcb-like"}, "--workload tpcb-like is a pgbench script, and pgbench drives PostgreSQL only: with --engine mariadb want one of oltp_write_only, oltp_insert"},
		{[]string{"--workload", "simple-update", "--tables", "2"}, "--workload simple-update is a pgbench script"},
		{[]string{"--engine", "postgres", "--workload", "tpcb-like", "--tables", "2"}, "--tables is sysbench's; with --workload tpcb-like the data set is pgbench's tables at --scale"},
		{[]string{"--engine", "postgres", "--workload", "simple-update", "--table-size", "500"}, "--table-size is sysbench's"},
		{[]string{"--engine", "postgres", "--workload", "tpcb-like", "--scale", "101"}, "--scale 101: want 1..100"},
		{[]string{"--engine", "postgres", "--scale", "5"}, "--scale is pgbench's data set; with --workload oltp_write_only the data set is --tables × --table-size"},
		{[]string{"--engine", "postgres", "--workload", "select-only"}, `--workload "select-only": want one of oltp_write_only, oltp_insert (sysbench) or, with --engine postgres, tpcb-like, simple-update (pgbench)`},
		{[]string{"--workload", "oltp_read_only"}, "--workload"},
		{[]string{"--duration", "1s"}, "--duration"},
		{[]string{"--target-tps", "-5"}, "--target-tps"},
		{[]string{"--rate", "2furlongs"}, "--rate"},
		{[]string{"--engine", "mysql"}, "--engine"},
		{[]string{"extra"}, "unexpected argument"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			p, _, errb, f := testProcess(t, true)
			code := Main(append([]string{"study", "sync", "--out", t.TempDir()}, c.args...), p)
			if code != 2 {
				t.Errorf("exit %d, want 2 (usage); stderr: %s", code, errb)
			}
			if !strings.Contains(errb.String(), c.want) {
				t.Errorf("stderr %q does not name %q", errb.String(), c.want)
			}
			if len(f.Calls) > 0 {
				t.Errorf("bad input ran commands: %v", f.Calls)
			}
		})
	}
}

func TestStudySyncQuickAndDefaults(t *testing.T) {
	for _, c := range []struct {
		args    []string
		engine  engine.Kind
		modes   []string
		rtts    []time.Duration
		threads []int
		data    string // the workload and its data set, as the start line names them
	}{
		{[]string{"--quick"}, engine.MariaDB, []string{"async", "semisync-after-sync", "semisync-after-commit", "galera", "galera-tuned"},
			[]time.Duration{0, 20 * time.Millisecond, 100 * time.Millisecond}, []int{1, 8}, "sysbench oltp_write_only on 4 × 10000 rows"},
		{[]string{"--engine", "postgres", "--quick", "--threads", "4"}, engine.Postgres,
			[]string{"pg-off", "pg-local", "pg-remote-write", "pg-on", "pg-remote-apply"},
			[]time.Duration{0, 20 * time.Millisecond, 100 * time.Millisecond}, []int{4}, "sysbench oltp_write_only on 4 × 10000 rows"},
		{nil, engine.MariaDB, []string{"async", "semisync-after-sync", "semisync-after-commit", "galera", "galera-tuned"},
			[]time.Duration{0, time.Millisecond, 7 * time.Millisecond, 20 * time.Millisecond, 100 * time.Millisecond}, []int{1, 8, 32, 64},
			"sysbench oltp_write_only on 4 × 10000 rows"},
		// pgbench's data set is --scale, 10 unless given, as with wirelab run --driver pgbench.
		{[]string{"--engine", "postgres", "--workload", "tpcb-like", "--quick"}, engine.Postgres,
			[]string{"pg-off", "pg-local", "pg-remote-write", "pg-on", "pg-remote-apply"},
			[]time.Duration{0, 20 * time.Millisecond, 100 * time.Millisecond}, []int{1, 8}, "pgbench tpcb-like at scale 10"},
		{[]string{"--engine", "postgres", "--workload", "simple-update", "--scale", "3", "--modes", "pg-on", "--rtts", "0,40ms", "--threads", "1"}, engine.Postgres,
			[]string{"pg-local", "pg-on"}, []time.Duration{0, 40 * time.Millisecond}, []int{1}, "pgbench simple-update at scale 3"},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			fs := newFlagSet(&Process{Stderr: os.Stderr}, "x", "", "")
			f := addSyncFlags(fs)
			if err := fs.Parse(c.args); err != nil {
				t.Fatal(err)
			}
			if err := applyQuick(fs, *f.quick, syncQuick); err != nil {
				t.Fatal(err)
			}
			o, err := f.options()
			if err != nil {
				t.Fatal(err)
			}
			if o.Engine != c.engine || !slices.Equal(syncrep.Names(o.Modes), c.modes) || !slices.Equal(o.RTTs, c.rtts) || !slices.Equal(o.Threads, c.threads) {
				t.Errorf("options: engine %s modes %v rtts %v threads %v", o.Engine, syncrep.Names(o.Modes), o.RTTs, o.Threads)
			}
			if got := syncWorkload(o); got != c.data {
				t.Errorf("workload %q, want %q", got, c.data)
			}
			if *f.quick {
				// --quick must finish within 15 minutes even on PostgreSQL's five modes.
				if est := o.Estimate(); est > 12*time.Minute {
					t.Errorf("--quick estimate %s, want well under 15 minutes", est)
				}
			}
		})
	}
}

// predict on a real sync run (MariaDB --quick: 0, 20 and 100 ms) with the 20 ms points
// held out: each mode's commit term, fitted on 0 and 100 ms, carries to 20 ms within 10%
// of what was measured there.
func TestPredictCommitHeldOutRTT(t *testing.T) {
	full, err := result.ReadFile(filepath.Join("testdata", "sync-quick", "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	held := *full
	held.Points = nil
	for _, p := range full.Points {
		if p.Sync.RTTMs != 20 {
			held.Points = append(held.Points, p)
		}
	}
	dir := t.TempDir()
	if err := result.Write(dir, &held); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runPredictCmd(t, "--from", dir, "--rtt", "20ms", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var got []commitPrediction
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	if len(got) != 3 {
		t.Fatalf("%d predictions, want one per mode: %s", len(got), out)
	}
	for _, c := range got {
		measured, ok := result.SyncMean(full.Points, c.Mode, 20, c.Threads, func(p result.Point) float64 { return p.Sync.CommitP50Ms })
		if !ok {
			t.Fatalf("no measured %s at 20 ms", c.Mode)
		}
		if c.RTTMs != 20 || math.Abs(c.CommitP50Ms-measured) > 0.1*measured+0.05 {
			t.Errorf("%s: predicted %.3f ms at %g ms, measured %.3f ms", c.Mode, c.CommitP50Ms, c.RTTMs, measured)
		}
	}
	// --against models links and CPUs, which a sync run has no profile for.
	if _, _, errs := runPredictCmd(t, "--from", dir, "--against", dir); !strings.Contains(errs, "--against") {
		t.Errorf("--against on a sync run: %q, want it refused by name", errs)
	}
}
