package cli

import (
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/flagx"
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

// syncFlags wire the study's own flags (syncrep.Flags) with the shared ones: the engine,
// the wire (link's, but for its round trip: the study sweeps --rtts) and real hosts.
type syncFlags struct {
	eng     engineFlag
	study   *syncrep.Flags
	out     *string
	quick   *bool
	measure *measureFlags
	margin  marginFlag
	link    *link.Flags
	hosts   *hostsFlags
}

func addSyncFlags(fs *flag.FlagSet) *syncFlags {
	return &syncFlags{
		eng:     addEngineFlag(fs),
		measure: addMeasureFlags(fs),
		margin:  addMarginFlag(fs, marginOfMachine),
		study:   syncrep.AddFlags(fs),
		out:     addOutFlag(fs, "sync"),
		quick:   fs.Bool("quick", false, "RTTs 0,20ms,100ms; threads 1,8; 6 s points after 2 s warm-up; no wire check"),
		link:    link.AddFlags(fs),
		hosts:   addHostsFlags(fs),
	}
}

func studySync(p *Process, args []string) error {
	fs := newFlagSet(p, "study sync", syncHelp,
		"wirelab study sync --quick\nwirelab study sync --engine postgres --quick\n"+
			"wirelab study sync --engine postgres --workload tpcb-like --scale 8 --quick\n"+
			"wirelab study sync --modes async,semisync-after-sync --rtts 0,7ms,20ms --threads 1,32 --target-tps 1000\n"+
			"wirelab study sync --hosts hosts.yaml --modes async,semisync-after-sync,semisync-after-commit --quick --dry-run")
	f := addSyncFlags(fs)
	o, mo, err := studyPreamble(p, fs, args, "sync", f.quick, syncQuick, f.out, f.measure, f.options)
	if err != nil {
		return err
	}
	if mo.Margin, err = f.margin.forMachine(p); err != nil {
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
		o.Engine.Title(), strings.Join(syncrep.Names(o.Modes), ","), o.RTTList(), flagx.JoinInts(o.Threads), o.WorkloadText(), o.Estimate(), mo.Out)
	return f.hosts.run(p, ho, syncrep.New(o), mo)
}

// hostsOptions are the real hosts' options with --hosts (nil without): the source on the
// inventory's server, the replica on its replica host. What the study does not run there
// is refused by name before anything is contacted (syncrep.CheckHosts: PostgreSQL, Galera,
// --modes left to its default, which includes Galera), and so is `link check`.
func (f *syncFlags) hostsOptions(p *Process, o *syncrep.Options) (*remote.Options, error) {
	if on, err := f.hosts.check(); !on || err != nil {
		return nil, err
	}
	if err := syncrep.CheckHosts(*o, f.study.ModesGiven()); err != nil {
		return nil, &UsageError{err}
	}
	return f.hosts.replica(p, engine.MariaDB, &o.CheckWire)
}

// options validates every flag, naming it, before anything touches the kernel.
func (f *syncFlags) options() (syncrep.Options, error) {
	k, err := f.eng.kind()
	if err != nil {
		return syncrep.Options{}, err
	}
	return f.study.Options(k, f.link)
}
