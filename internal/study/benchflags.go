package study

import (
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/flagx"
	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/pgbench"
	"github.com/wirelab/wirelab/internal/sysbench"
)

// BenchDefaults are a command's own defaults for the bench flags.
type BenchDefaults struct {
	Threads           string
	Duration, Warmup  time.Duration
	Tables, TableSize int
}

// BenchFlags are the load knobs of run and every closed-loop study (Bench): the threads,
// the points' length, the driver with its workload and data set, repeats and the
// server's data cache. The wire, the engine, the server and the hosts are the command's.
type BenchFlags struct {
	fs                                *flag.FlagSet // which flags the user gave
	threads, workload, randType, pool *string
	driver                            *string
	duration, warmup                  *time.Duration
	tables, tableSize, repeat, scale  *int
}

// AddBenchFlags registers the bench flags on fs with a command's defaults.
func AddBenchFlags(fs *flag.FlagSet, d BenchDefaults) *BenchFlags {
	return &BenchFlags{
		fs:        fs,
		threads:   fs.String("threads", d.Threads, fmt.Sprintf("comma-separated client thread counts (sysbench --threads, pgbench -c), each 1..%d", flagx.MaxThreads)),
		duration:  fs.Duration("duration", d.Duration, "measured length of each point (>= 1s)"),
		warmup:    fs.Duration("warmup", d.Warmup, "seconds run before each point's measurement and dropped from its averages"),
		workload:  fs.String("workload", sysbench.DefaultWorkload, "sysbench workload (oltp_read_only, oltp_point_select, oltp_read_write, ...); with --driver pgbench a built-in script: "+pgbench.TPCB+" (its default), "+strings.Join(pgbench.Builtins[1:], ", ")),
		tables:    fs.Int("tables", d.Tables, "sysbench --tables"),
		tableSize: fs.Int("table-size", d.TableSize, "sysbench --table-size (rows per table)"),
		randType:  fs.String("rand-type", "pareto", "sysbench --rand-type: "+strings.Join(sysbench.RandTypes, ", ")),
		repeat:    fs.Int("repeat", 1, "run each point N times (mean ± 95% CI in the report)"),
		pool:      fs.String("buffer-pool", "1G", "the server's data cache, innodb_buffer_pool_size (MariaDB) or shared_buffers (PostgreSQL): large enough that the data set lives in memory"),
		driver:    fs.String("driver", DriverSysbench, "load driver: sysbench, or pgbench (PostgreSQL's, with --engine postgres; run only: study sync takes pgbench's scripts by --workload)"),
		scale:     AddScaleFlag(fs, "--driver pgbench only"),
	}
}

// AddScaleFlag is --scale, pgbench's data set, for a command whose load pgbench may
// drive; when says when it applies.
func AddScaleFlag(fs *flag.FlagSet, when string) *int {
	return fs.Int("scale", 10, "pgbench's data set, pgbench -i -s (100000 accounts per unit); "+when)
}

// Driver is --driver as given, before it is checked.
func (f *BenchFlags) Driver() string { return *f.driver }

// Bench checks every flag for a server of kind k and the study studyName, each error
// naming its flag, and returns the knobs; Engine is k, and Shaper, Congestion and
// Existing are the command's to set.
func (f *BenchFlags) Bench(k engine.Kind, studyName string) (Bench, error) {
	var b Bench
	var err error
	if b.Threads, err = flagx.ParseThreads(*f.threads); err != nil {
		return b, err
	}
	if *f.duration < time.Second {
		return b, fmt.Errorf("--duration %s: want at least 1s, e.g. 10s", *f.duration)
	}
	if *f.warmup < 0 || *f.warmup >= time.Hour {
		return b, fmt.Errorf("--warmup %s: want 0s or more, e.g. 2s", *f.warmup)
	}
	b.Duration, b.Warmup, b.Engine = *f.duration, *f.warmup, k
	if err := f.load(&b, studyName); err != nil {
		return b, err
	}
	if err := sysbench.CheckRandType(*f.randType); err != nil {
		return b, err
	}
	if err := sysbench.CheckDataSet(*f.tables, *f.tableSize); err != nil {
		return b, err
	}
	if *f.repeat < 1 || *f.repeat > 100 {
		return b, fmt.Errorf("--repeat %d: want 1..100", *f.repeat)
	}
	if err := lab.CheckBufferPool(*f.pool); err != nil {
		return b, err
	}
	b.Repeat, b.Tables, b.TableSize, b.RandType, b.BufferPool = *f.repeat, *f.tables, *f.tableSize, *f.randType, *f.pool
	return b, nil
}

// load checks the driver against the engine and the study, and the workload and
// data-set flags against the driver, into b. A default is not a choice, but a flag
// given for the other driver would be silently ignored, so it is refused.
func (f *BenchFlags) load(b *Bench, studyName string) error {
	b.Driver, b.Workload = *f.driver, *f.workload
	switch b.Driver {
	case DriverSysbench:
		if flagx.Given(f.fs, "scale") {
			return fmt.Errorf("--scale is pgbench's data set; with --driver sysbench the data set is --tables × --table-size (or add --driver pgbench)")
		}
		if !sysbench.IsWorkload(b.Workload) {
			hint := ""
			if slices.Contains(pgbench.Builtins, b.Workload) {
				hint = " (" + b.Workload + " is a pgbench script: add --driver pgbench --engine postgres)"
			}
			return fmt.Errorf("--workload %q: with --driver sysbench want one of %s%s", b.Workload, strings.Join(sysbench.Workloads, ", "), hint)
		}
		return nil
	case DriverPgbench:
	default:
		return fmt.Errorf("--driver %q: want sysbench or pgbench", b.Driver)
	}
	if b.Engine != engine.Postgres {
		return fmt.Errorf("--driver pgbench: pgbench drives PostgreSQL only; add --engine postgres, or use --driver sysbench with %s", b.kind().Title())
	}
	if studyName != "run" {
		return fmt.Errorf("--driver pgbench: study %s runs sysbench only; pgbench drives `wirelab run --engine postgres --driver pgbench`", studyName)
	}
	if n := flagx.FirstGiven(f.fs, func(n string) bool { return n == "tables" || n == "table-size" || n == "rand-type" }); n != "" {
		return fmt.Errorf("--%s is sysbench's; with --driver pgbench the data set is --scale and the built-in scripts draw keys uniformly", n)
	}
	if !flagx.Given(f.fs, "workload") {
		b.Workload = pgbench.TPCB // pgbench's own default script
	}
	if !slices.Contains(pgbench.Builtins, b.Workload) {
		return fmt.Errorf("--workload %q: with --driver pgbench want one of %s", b.Workload, strings.Join(pgbench.Builtins, ", "))
	}
	if *f.scale < 1 || *f.scale > 1000 {
		return fmt.Errorf("--scale %d: want 1..1000 (pgbench -i -s: 100000 accounts, about 15 MB, per unit)", *f.scale)
	}
	b.Scale = *f.scale
	return nil
}
