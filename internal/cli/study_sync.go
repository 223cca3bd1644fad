package cli

import (
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/remote"
	"github.com/wirelab/wirelab/internal/syncrep"
)

const syncHelp = `what a synchronous replica across a WAN costs every commit: a primary in the server
host, the load driver beside it (unshaped, over its unix socket), a replica behind the
shaped wire. Each mode is one series, swept over --rtts × --threads:
--engine mariadb: async (the control), semisync-after-sync, semisync-after-commit
  (rpl_semi_sync_master_wait_point; --semisync-timeout must be ≥ 10 × the largest RTT
  so semi-sync never falls back; a point where it did is flagged);
  galera, galera-tuned: a two-node Galera cluster across the wire, default send
  windows and 512; run after the other modes, the replication pair stopped; --rtts up
  to 5s
--engine postgres: pg-off, pg-local (the control), pg-remote-write, pg-on,
  pg-remote-apply (synchronous_commit with one synchronous standby)
--workload: sysbench oltp_write_only (default) or oltp_insert on --tables × --table-size;
  with --engine postgres also pgbench tpcb-like or simple-update on pgbench -i's tables at
  --scale (1..100; tpcb-like's clients queue on its --scale branch rows, whose locks
  are held through the commit's wait: pgbench's advice is --scale ≥ the threads)
Each point records TPS, commit latency p50/p95/p99 (sysbench's histogram, pgbench's
per-transaction log), wire bytes each way, CPU of the primary and the replica, the
replica's state; after it the replica catches up and every table's checksum must
match. Findings: each commit pays X RTT + Y ms; with N threads a mode sustains T TPS at
R ms (P% of the control); with --target-tps, the RTT at which each mode falls below it.
--hosts hosts.yaml (MariaDB): the primary on the inventory's server, sysbench beside it,
the replica on its replica host (nic: the NIC shaped toward the server); --modes is
required there, a subset of async,semisync-after-sync,semisync-after-commit (Galera and
PostgreSQL run in the namespace lab only); see docs/ssh-hosts.md.
--quick: RTTs 0,20ms,100ms; threads 1,8; 6 s points after a 2 s warm-up (≤ 15 min)`

// syncQuick are --quick's values for the sync study.
var syncQuick = map[string]string{"rtts": "0,20ms,100ms", "threads": "1,8", "duration": "6s", "warmup": "2s", "check-wire": "false"}

// syncFlags are the study's own flags; the wire's other settings are the shared link flags.
type syncFlags struct {
	eng                             engineFlag
	modes, workload, rtts, threads  *string
	out, pool                       *string
	duration, warmup, timeout, cu   *time.Duration
	target                          *float64
	tables, tableSize, scale        *int
	quick, checkWire, awake, noWait *bool
	link                            *link.Flags
	hosts                           *hostsFlags
	fs                              *flag.FlagSet
}

// syncWorkloadUsage is --workload's line in the flag list.
var syncWorkloadUsage = "write workload: sysbench " + strings.Join(syncrep.Workloads, ", ") +
	"; with --engine postgres also pgbench " + strings.Join(syncrep.PgbenchWorkloads, ", ")

func addSyncFlags(fs *flag.FlagSet) *syncFlags {
	return &syncFlags{
		fs:        fs,
		eng:       addEngineFlag(fs),
		awake:     addAwakeFlag(fs),
		noWait:    addNoWaitFlag(fs),
		modes:     fs.String("modes", "", "modes to compare (default: every mode of --engine; the control is always added)"),
		workload:  fs.String("workload", "oltp_write_only", syncWorkloadUsage),
		rtts:      fs.String("rtts", "0,1ms,7ms,20ms,100ms", "round-trip times between primary and replica, comma-separated"),
		threads:   fs.String("threads", "1,8,32,64", "sysbench threads or pgbench clients, comma-separated"),
		duration:  fs.Duration("duration", 20*time.Second, "measured part of each point"),
		warmup:    fs.Duration("warmup", 5*time.Second, "load before each point's measured part, left out of its figures"),
		timeout:   fs.Duration("semisync-timeout", 60*time.Second, "rpl_semi_sync_master_timeout: at least 10 × the largest --rtts"),
		target:    fs.Float64("target-tps", 0, "say at which RTT each mode falls below this many TPS (0 = no target)"),
		tables:    fs.Int("tables", 4, "sysbench --tables"),
		tableSize: fs.Int("table-size", 10000, "sysbench --table-size (rows per table)"),
		scale:     addScaleFlag(fs, fmt.Sprintf("with --workload %s only, 1..%d", strings.Join(syncrep.PgbenchWorkloads, " or "), syncrep.MaxScale)),
		cu:        fs.Duration("catchup-timeout", 5*time.Minute, "how long the replica may take to catch up after a point"),
		checkWire: fs.Bool("check-wire", true, "measure the wire (RTT, loss, iperf3) after every change of it and record it"),
		pool:      fs.String("buffer-pool", "512M", "each server's data cache: innodb_buffer_pool_size (MariaDB), shared_buffers (PostgreSQL)"),
		out:       fs.String("out", "", "directory for results.json, results.csv and the report (default results/sync-<time>)"),
		quick:     fs.Bool("quick", false, "RTTs 0,20ms,100ms; threads 1,8; 6 s points after 2 s warm-up; no wire check"),
		link:      link.AddFlags(fs),
		hosts:     addHostsFlags(fs),
	}
}

func studySync(p *Process, args []string) error {
	fs := newFlagSet(p, "study sync", syncHelp,
		"wirelab study sync --quick\nwirelab study sync --engine postgres --quick\n"+
			"wirelab study sync --engine postgres --workload tpcb-like --scale 8 --quick\n"+
			"wirelab study sync --modes async,semisync-after-sync --rtts 0,7ms,20ms --threads 1,32 --target-tps 1000\n"+
			"wirelab study sync --hosts hosts.yaml --modes async,semisync-after-sync,semisync-after-commit --quick --dry-run")
	f := addSyncFlags(fs)
	o, out, err := studyPreamble(p, fs, args, "sync", f.quick, syncQuick, f.out, f.options)
	if err != nil {
		return err
	}
	ho, err := f.hostsOptions(p, &o)
	if err != nil {
		return err
	}
	if ho == nil {
		far := o.Link
		far.Delay = link.OneWay(slices.Max(o.RTTs))
		if err := preflight(p, o.Shaper, far); err != nil {
			return err
		}
	}
	fmt.Fprintf(p.Stderr, "study sync: %s, modes %s, RTTs %s, threads %s, %s; about %s; results in %s\n",
		o.Engine.Title(), strings.Join(syncrep.Names(o.Modes), ","), *f.rtts, *f.threads, syncWorkload(o), o.Estimate(), out)
	return f.hosts.run(p, ho, syncrep.New(o), measureOptions{Out: out, Awake: *f.awake, NoWait: *f.noWait})
}

// hostsOptions are the real hosts' options with --hosts (nil without): the source on the
// inventory's server, the replica on its replica host. What the study does not run there
// is refused by name before anything is contacted (syncrep.CheckHosts: PostgreSQL, Galera,
// --modes left to its default, which includes Galera), and so is `link check`.
func (f *syncFlags) hostsOptions(p *Process, o *syncrep.Options) (*remote.Options, error) {
	if on, err := f.hosts.check(); !on || err != nil {
		return nil, err
	}
	if err := syncrep.CheckHosts(*o, given(f.fs, "modes")); err != nil {
		return nil, &UsageError{err}
	}
	return f.hosts.replica(p, engine.MariaDB, &o.CheckWire)
}

// options validates every flag, naming it, before anything touches the kernel.
func (f *syncFlags) options() (syncrep.Options, error) {
	o := syncrep.Options{Workload: *f.workload, Duration: *f.duration, Warmup: *f.warmup, SemiSyncTimeout: *f.timeout,
		TargetTPS: *f.target, Tables: *f.tables, TableSize: *f.tableSize, BufferPool: *f.pool,
		CatchUpTimeout: *f.cu, CheckWire: *f.checkWire}
	var err error
	if o.Engine, err = f.eng.kind(); err != nil {
		return o, err
	}
	if n := firstGiven(f.fs, func(n string) bool { return n == "rtt" || n == "delay" }); n != "" {
		return o, fmt.Errorf("--%s sets one round trip; this study sweeps --rtts (e.g. --rtts 0,20ms,100ms)", n)
	}
	if o.Link, o.Shaper, err = f.link.Condition(); err != nil {
		return o, err
	}
	modes := *f.modes
	if modes == "" {
		modes = strings.Join(syncrep.Names(syncrep.ModesFor(o.Engine)), ",")
	}
	if o.Modes, err = syncrep.ParseModes(modes, o.Engine); err != nil {
		return o, err
	}
	if o.RTTs, err = link.ParseRTTs("--rtts", *f.rtts); err != nil {
		return o, err
	}
	if o.Threads, err = parseThreads(*f.threads); err != nil {
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

// dataFlags refuses a data-set flag of the other driver than the workload's, which would
// be ignored: pgbench's --scale with a sysbench workload, sysbench's --tables and
// --table-size with a pgbench one.
func (f *syncFlags) dataFlags(o syncrep.Options) error {
	if !o.Pgbench() {
		if given(f.fs, "scale") {
			return fmt.Errorf("--scale is pgbench's data set; with --workload %s the data set is --tables × --table-size (or use --workload %s)",
				o.Workload, strings.Join(syncrep.PgbenchWorkloads, " or "))
		}
		return nil
	}
	if n := firstGiven(f.fs, func(n string) bool { return n == "tables" || n == "table-size" }); n != "" {
		return fmt.Errorf("--%s is sysbench's; with --workload %s the data set is pgbench's tables at --scale", n, o.Workload)
	}
	return nil
}

// syncWorkload names the workload and its data set for the start line.
func syncWorkload(o syncrep.Options) string {
	if o.Pgbench() {
		return fmt.Sprintf("pgbench %s at scale %d", o.Workload, o.Scale)
	}
	return fmt.Sprintf("sysbench %s on %d × %d rows", o.Workload, o.Tables, o.TableSize)
}
