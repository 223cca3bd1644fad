package syncrep

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/pgbench"
	"github.com/wirelab/wirelab/internal/replication"
	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/study"
)

// pgbenchOptions are valid options of a PostgreSQL sweep driven by pgbench's tpcb-like.
func pgbenchOptions() Options {
	ms, _ := ParseModes("pg-on", engine.Postgres)
	return Options{Engine: engine.Postgres, Modes: ms, Workload: pgbench.TPCB, Scale: 8,
		RTTs: []time.Duration{0, 40 * time.Millisecond}, Threads: []int{1, 8}, Duration: 6 * time.Second,
		Warmup: 2 * time.Second, SemiSyncTimeout: time.Minute, BufferPool: "512M", CatchUpTimeout: time.Minute}
}

func TestValidatePgbench(t *testing.T) {
	for _, w := range PgbenchWorkloads {
		o := pgbenchOptions()
		o.Workload = w
		if err := o.Validate(); err != nil {
			t.Errorf("%s on PostgreSQL: %v", w, err)
		}
	}
	// sysbench's workloads stay accepted on PostgreSQL.
	o := pgbenchOptions()
	o.Workload, o.Scale, o.Tables, o.TableSize = "oltp_insert", 0, 4, 10000
	if err := o.Validate(); err != nil {
		t.Errorf("oltp_insert on PostgreSQL: %v", err)
	}
	cases := []struct {
		name, want string
		edit       func(o *Options)
	}{
		{"simple-update on mariadb", "--workload simple-update is a pgbench script, and pgbench drives PostgreSQL only: with --engine mariadb", func(o *Options) {
			o.Engine, o.Workload = engine.MariaDB, pgbench.SimpleUpdate
			o.Modes, _ = ParseModes("semisync-after-sync", engine.MariaDB)
		}},
		{"no scale", "--scale 0: want 1..100", func(o *Options) { o.Scale = 0 }},
		{"scale too large", "--scale 101: want 1..100", func(o *Options) { o.Scale = 101 }},
		{"sysbench tables", "--tables/--table-size are sysbench's; with --workload tpcb-like the data set is --scale", func(o *Options) { o.Tables = 4 }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := pgbenchOptions()
			c.edit(&o)
			if err := o.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Validate() = %v, want an error containing %q", err, c.want)
			}
		})
	}
}

// A pgbench sweep prepares pgbench's tables at the scale with pgbench, checks all four of
// them on the standby, records the driver and scale, and runs the script in every cell.
func TestPgbenchStudy(t *testing.T) {
	s := New(pgbenchOptions())
	n := s.Needs()
	if n.Data != (study.DataSet{Driver: study.DriverPgbench, Workload: pgbench.TPCB, Scale: 8}) {
		t.Errorf("data set %+v", n.Data)
	}
	if got := replication.TableNames(s.tables()); !slices.Equal(got, replication.TableNames(replication.PgbenchTables())) {
		t.Errorf("tables checked %v", got)
	}
	if n.Spec.Driver != study.DriverPgbench || n.Spec.Scale != 8 || n.Spec.Tables != 0 || n.Spec.TableSize != 0 || n.Spec.Workload != pgbench.TPCB {
		t.Errorf("spec %+v", n.Spec)
	}
	notes := strings.Join(n.Notes, "\n")
	for _, want := range []string{"pgbench tpcb-like on pgbench -i's tables at scale 8 (800000 accounts)", "per-transaction log", "one of 8 branch rows"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	for c, ok := s.Next(nil); ok; c, ok = s.Next(nil) {
		if w := c.(cell).Workload; w != pgbench.TPCB {
			t.Errorf("%s runs %q", c.Label(), w)
		}
	}
	// simple-update has no branch row to queue on; sysbench keeps its own data set.
	o := pgbenchOptions()
	o.Workload = pgbench.SimpleUpdate
	if notes := strings.Join(New(o).notes(), "\n"); strings.Contains(notes, "branch rows") {
		t.Errorf("simple-update notes speak of branch rows:\n%s", notes)
	}
	sb := New(validOptions())
	if d := sb.data(); d.Driver != study.DriverSysbench || d.Tables != 4 || d.TableSize != 10000 || d.Scale != 0 {
		t.Errorf("sysbench data set %+v", d)
	}
	if got := replication.TableNames(sb.tables()); !slices.Equal(got, []string{"sbtest1", "sbtest2", "sbtest3", "sbtest4"}) {
		t.Errorf("sysbench tables %v", got)
	}
}

// A pgbench point's commit percentiles are those of pgbench's per-transaction log: a real
// TPC-B run's log (two threads), read as the driver reads it, sets the point's latency,
// and fillSync carries it into the commit figures.
func TestPgbenchCommitFromLog(t *testing.T) {
	dir := t.TempDir()
	files, _ := filepath.Glob("../pgbench/testdata/tpcb_log/*.gz")
	if len(files) == 0 {
		t.Fatal("no pgbench log fixture")
	}
	for _, name := range files {
		gunzip(t, name, filepath.Join(dir, strings.TrimSuffix(filepath.Base(name), ".gz")))
	}
	lg, err := pgbench.ReadLogs(dir, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	p := result.Point{TPS: 4000, Threads: 2}
	p.SetLatency(lg.Histogram, lg.MaxMs)
	var ss result.SyncStats
	fillSync(&ss, p, pgCommit{level: "on"}, State{Replica: "sync", Waiting: true}, State{Replica: "sync", Waiting: true})
	h := lg.Histogram
	if ss.CommitP50Ms != h.Percentile(50) || ss.CommitP95Ms != h.Percentile(95) || ss.CommitP99Ms != h.Percentile(99) {
		t.Errorf("commit p50/p95/p99 %g/%g/%g, log's %g/%g/%g", ss.CommitP50Ms, ss.CommitP95Ms, ss.CommitP99Ms,
			h.Percentile(50), h.Percentile(95), h.Percentile(99))
	}
	if !(ss.CommitP50Ms > 0 && ss.CommitP50Ms < ss.CommitP99Ms && ss.CommitP99Ms <= lg.MaxMs) || ss.FellBack {
		t.Errorf("commit figures %+v (log max %g ms)", ss, lg.MaxMs)
	}
}

func gunzip(t *testing.T, from, to string) {
	t.Helper()
	f, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if _, err := io.Copy(out, zr); err != nil {
		t.Fatal(err)
	}
}
