package syncrep

import (
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/flagx"
	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/study"
)

// Flags are the study's own flags, registered by AddFlags and turned into Options by
// Options. The engine and the wire's other settings (link's) are the command's.
type Flags struct {
	fs                            *flag.FlagSet // which flags the user gave
	modes, workload, rtts         string
	threads, pool                 string
	duration, warmup, timeout, cu time.Duration
	target                        float64
	tables, tableSize             int
	scale                         *int
	checkWire                     bool
}

// AddFlags registers the study's flags on fs.
func AddFlags(fs *flag.FlagSet) *Flags {
	f := &Flags{fs: fs}
	fs.StringVar(&f.modes, "modes", "", "modes to compare (default: every mode of --engine; the control is always added)")
	fs.StringVar(&f.workload, "workload", "oltp_write_only", "write workload: sysbench "+strings.Join(Workloads, ", ")+
		"; with --engine postgres also pgbench "+strings.Join(PgbenchWorkloads, ", "))
	fs.StringVar(&f.rtts, "rtts", "0,1ms,7ms,20ms,100ms", "round-trip times between primary and replica, comma-separated")
	fs.StringVar(&f.threads, "threads", "1,8,32,64", "sysbench threads or pgbench clients, comma-separated")
	fs.DurationVar(&f.duration, "duration", 20*time.Second, "measured part of each point")
	fs.DurationVar(&f.warmup, "warmup", 5*time.Second, "load before each point's measured part, left out of its figures")
	fs.DurationVar(&f.timeout, "semisync-timeout", 60*time.Second, "rpl_semi_sync_master_timeout: at least 10 × the largest --rtts")
	fs.Float64Var(&f.target, "target-tps", 0, "say at which RTT each mode falls below this many TPS (0 = no target)")
	fs.IntVar(&f.tables, "tables", 4, "sysbench --tables")
	fs.IntVar(&f.tableSize, "table-size", 10000, "sysbench --table-size (rows per table)")
	f.scale = study.AddScaleFlag(fs, fmt.Sprintf("with --workload %s only, 1..%d", strings.Join(PgbenchWorkloads, " or "), MaxScale))
	fs.DurationVar(&f.cu, "catchup-timeout", 5*time.Minute, "how long the replica may take to catch up after a point")
	fs.BoolVar(&f.checkWire, "check-wire", true, "measure the wire (RTT, loss, iperf3) after every change of it and record it")
	fs.StringVar(&f.pool, "buffer-pool", "512M", "each server's data cache: innodb_buffer_pool_size (MariaDB), shared_buffers (PostgreSQL)")
	return f
}

// Options validates every flag for a server of kind k on the wire's other settings
// (wire: a round trip is refused, the study sweeps --rtts), naming the flag, before
// anything touches the kernel.
func (f *Flags) Options(k engine.Kind, wire *link.Flags) (Options, error) {
	o := Options{Engine: k, Workload: f.workload, Duration: f.duration, Warmup: f.warmup, SemiSyncTimeout: f.timeout,
		TargetTPS: f.target, Tables: f.tables, TableSize: f.tableSize, BufferPool: f.pool,
		CatchUpTimeout: f.cu, CheckWire: f.checkWire}
	if n := flagx.FirstGiven(f.fs, func(n string) bool { return n == "rtt" || n == "delay" }); n != "" {
		return o, fmt.Errorf("--%s sets one round trip; this study sweeps --rtts (e.g. --rtts 0,20ms,100ms)", n)
	}
	var err error
	if o.Link, o.Shaper, err = wire.Condition(); err != nil {
		return o, err
	}
	modes := f.modes
	if modes == "" {
		modes = strings.Join(Names(ModesFor(o.Engine)), ",")
	}
	if o.Modes, err = ParseModes(modes, o.Engine); err != nil {
		return o, err
	}
	if o.RTTs, err = link.ParseRTTs("--rtts", f.rtts); err != nil {
		return o, err
	}
	if o.Threads, err = flagx.ParseThreads(f.threads); err != nil {
		return o, err
	}
	if err := lab.CheckBufferPool(o.BufferPool); err != nil {
		return o, err
	}
	if o.Pgbench() {
		o.Tables, o.TableSize, o.Scale = 0, 0, *f.scale
	}
	if err := o.Validate(); err != nil {
		return o, err
	}
	return o, f.dataFlags(o)
}

// ModesGiven says whether --modes was given: real hosts need the modes named.
func (f *Flags) ModesGiven() bool { return flagx.Given(f.fs, "modes") }

// dataFlags refuses a data-set flag of the other driver than the workload's, which would
// be ignored: pgbench's --scale with a sysbench workload, sysbench's --tables and
// --table-size with a pgbench one.
func (f *Flags) dataFlags(o Options) error {
	if !o.Pgbench() {
		if flagx.Given(f.fs, "scale") {
			return fmt.Errorf("--scale is pgbench's data set; with --workload %s the data set is --tables × --table-size (or use --workload %s)",
				o.Workload, strings.Join(PgbenchWorkloads, " or "))
		}
		return nil
	}
	if n := flagx.FirstGiven(f.fs, func(n string) bool { return n == "tables" || n == "table-size" }); n != "" {
		return fmt.Errorf("--%s is sysbench's; with --workload %s the data set is pgbench's tables at --scale", n, o.Workload)
	}
	return nil
}

// WorkloadText names the workload and its data set, for the start line.
func (o Options) WorkloadText() string {
	if o.Pgbench() {
		return fmt.Sprintf("pgbench %s at scale %d", o.Workload, o.Scale)
	}
	return fmt.Sprintf("sysbench %s on %d × %d rows", o.Workload, o.Tables, o.TableSize)
}

// RTTList is the round trips as --rtts spells them, "0,20ms,100ms", for the start line.
func (o Options) RTTList() string {
	s := make([]string, len(o.RTTs))
	for i, d := range o.RTTs {
		s[i] = flagx.Duration(d)
		if d == 0 {
			s[i] = "0"
		}
	}
	return strings.Join(s, ",")
}
