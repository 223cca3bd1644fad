package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/replaystudy"
	"github.com/wirelab/wirelab/internal/study"
	"github.com/wirelab/wirelab/internal/tunnel"
)

const replayHelp = `replay a captured query log across the lab's wire, or to an existing server, and
report what the network costs that workload: one connection per captured session,
statements in order, think time as recorded (scaled by --speed).
The log: the MariaDB/MySQL general log, the slow log written with long_query_time=0, or
PostgreSQL's log in pgreplay's format (log_line_prefix '%m|%u|%d|%c|', or csvlog); the
server's engine is the log's. It is read once before anything is built: a line it cannot
read, a session whose captured login failed, a statement longer than the server's
max_allowed_packet are refused, naming the line.
The data: --dump FILE.sql loaded before the first point, or --prepare-sysbench; every
point starts from the same data, put back between points.
The points: every wire of the sweep (--rate and --rtt take comma-separated lists) × every
series (--series plain,compression,tls,tunnel; or one series from --compression, --tls
and --channel). --checksums records every table's checksum after each replay.
See docs/replay.md.`

// replayFlags are `wirelab replay`'s flags: the wire's sweep (link's), the replay's own
// (replaystudy's), the engine, an existing server, real hosts (refused), the tunnel's
// knobs and where and how the measurement runs.
type replayFlags struct {
	fs      *flag.FlagSet
	wire    *link.SweepFlags
	replay  *replaystudy.Flags
	engine  *string
	server  *serverFlags
	hosts   *string
	tunnel  *tunnelFlags
	out     *string
	congest *string
	awake   *bool
	noWait  *bool
}

func addReplayFlags(fs *flag.FlagSet) *replayFlags {
	return &replayFlags{fs: fs,
		wire:    link.AddSweepFlags(fs),
		replay:  replaystudy.AddFlags(fs),
		engine:  fs.String("engine", "", "the server's engine, mariadb or postgres: the log's (mysql-* logs: mariadb, pg-*: postgres); another is refused"),
		server:  addServerFlags(fs),
		hosts:   fs.String("hosts", "", "not with replay: a replay runs in the namespace lab, to the lab's server or an existing one (--server-dsn)"),
		tunnel:  addTunnelFlags(fs, "auto", tunnel.GroupWait{}),
		out:     addOutFlag(fs, "replay"),
		congest: addCongestionFlag(fs),
		awake:   addAwakeFlag(fs),
		noWait:  addNoWaitFlag(fs),
	}
}

func cmdReplay(p *Process, args []string) error {
	fs := newFlagSet(p, "replay LOG", replayHelp,
		"wirelab replay general.log --prepare-sysbench --rtt 0,20ms --speed max\n"+
			"wirelab replay general.log --dump app.sql --rtt 0,2ms,20ms --rate 20mbit,unlimited --series plain,compression,tls\n"+
			"wirelab replay postgresql.log --dump app.sql --rtt 0,20ms --speed 10 --for 60s --checksums\n"+
			"wirelab replay slow.log --format mysql-slow --dump app.sql --server-dsn 'bench@tcp(10.0.0.5:3306)/wlreplay' --rtt 0,20ms")
	f := addReplayFlags(fs)
	// Flags may come before or after the log.
	logs, err := parseWithArgs(fs, args)
	if err != nil {
		return err
	}
	o, err := f.options(p, logs)
	if err != nil {
		return err
	}
	fmt.Fprintf(p.Stderr, "replay: %s (%s, %s), %d point(s): series %s at %s; results in %s\n",
		o.Log.Path, o.Log.Format, o.Engine().Title(), len(o.Links)*len(o.Series), seriesNames(o.Series), linkNames(o.Links), o.OutDir)
	return runStudy(p, replaystudy.New(o), measureOptions{Out: o.OutDir, Awake: *f.awake, NoWait: *f.noWait})
}

// options checks every flag, then reads the whole log (replaystudy.CheckLog), then what
// needs the machine (root, the wire's kernel features) and, with --server-dsn, the
// server: everything before the lab is built. Bad input is a usage error naming the flag
// or the log's line.
func (f *replayFlags) options(p *Process, logs []string) (replaystudy.Options, error) {
	var o replaystudy.Options
	if len(logs) != 1 {
		return o, usagef("replay: want one query log, got %d arguments; e.g. wirelab replay general.log --prepare-sysbench --rtt 0,20ms", len(logs))
	}
	if *f.hosts != "" {
		return o, usagef("replay: --hosts: a replay runs in the namespace lab (to the lab's server or an existing one, --server-dsn): on real hosts the replayer and the log would have to be staged on the client host, which is not done yet; drop --hosts")
	}
	links, shaper, err := f.wire.Conditions()
	if err != nil {
		return o, &UsageError{err}
	}
	checks, err := f.replay.LogChecks()
	if err != nil {
		return o, &UsageError{err}
	}
	topts, err := f.tunnel.options()
	if err != nil {
		return o, &UsageError{err}
	}
	fmt.Fprintf(p.Stderr, "replay: reading %s once to check it\n", logs[0])
	// A long log takes a while to read: Ctrl-C stops the reading.
	ctx, stop := untilInterrupt(p)
	log, err := replaystudy.CheckLog(ctx, logs[0], checks)
	interrupted := ctx.Err() != nil
	stop()
	if interrupted {
		return o, fmt.Errorf("replay: interrupted while reading %s; nothing was built", logs[0])
	}
	if err != nil {
		return o, &UsageError{err}
	}
	if err := f.checkEngine(log); err != nil {
		return o, err
	}
	if o, err = f.replay.Options(log); err != nil {
		return o, &UsageError{err}
	}
	if n := tunnelFlagGiven(f.fs); n != "" && !o.UsesTunnel() {
		return o, usagef("replay: --%s sets up the tunnel, and no series goes through it: add tunnel to --series (or --channel tunnel), or drop it", n)
	}
	if err := checkCongestion(p, *f.congest, false); err != nil {
		return o, &UsageError{err}
	}
	o.Links, o.Shaper, o.Congestion, o.Tunnel = links, shaper, *f.congest, topts
	return o, f.machine(p, &o)
}

// checkEngine refuses an --engine the log was not captured on.
func (f *replayFlags) checkEngine(log *replaystudy.LogInfo) error {
	if *f.engine == "" {
		return nil
	}
	k, err := engine.Parse(*f.engine)
	if err != nil {
		return &UsageError{err}
	}
	if k != log.Engine {
		return usagef("replay: --engine %s, and %s is a %s log (%s's): the log replays onto the engine it was captured on; drop --engine", k, log.Path, log.Format, log.Engine.Title())
	}
	return nil
}

// machine checks the existing server's flags, creates the output directory, then checks
// root and every wire of the sweep against the kernel, and logs in to an existing server
// (which must have an empty database).
func (f *replayFlags) machine(p *Process, o *replaystudy.Options) error {
	if *f.server.dsn != "" && o.Engine() != engine.MariaDB {
		return usagef("replay: --server-dsn names a MySQL/MariaDB server, and %s is a %s log: replay it onto the lab's %s (drop --server-dsn)", o.Log.Path, o.Log.Format, o.Engine().Title())
	}
	cfg, err := f.server.config(p, o.Engine(), o.UsesTLS())
	if err != nil {
		return err
	}
	if o.OutDir, err = outDir(*f.out, "replay"); err != nil {
		return &UsageError{err}
	}
	if err := requireRoot(p); err != nil {
		return err
	}
	for _, c := range o.Links {
		if err := preflight(p, o.Shaper, c); err != nil {
			return err
		}
	}
	if cfg == nil {
		return nil
	}
	tables := 0
	if o.Data.Sysbench {
		tables = o.Data.Tables
	}
	x, err := study.OpenExisting(context.Background(), cfg, tables, "--server-dsn")
	if err != nil {
		return err
	}
	if err := replaystudy.CheckEmpty(context.Background(), x, "--server-dsn"); err != nil {
		return errors.Join(&UsageError{err}, x.Stop(context.Background()))
	}
	o.Existing = x
	return nil
}

func seriesNames(ss []replaystudy.Series) string {
	n := make([]string, len(ss))
	for i, s := range ss {
		n[i] = s.Name()
	}
	return strings.Join(n, ",")
}

func linkNames(ls []link.Condition) string {
	n := make([]string, len(ls))
	for i, l := range ls {
		n[i] = l.String()
	}
	return strings.Join(n, " | ")
}
