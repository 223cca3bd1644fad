package cli

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/replication"
	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/study"
)

const replicationHelp = `the weak-network replication study (DTLE 2021): a source MariaDB in the server host,
a replica behind the wire (default 2mbit, 125ms each way = 250ms RTT), GTID + ROW binlog,
an oltp_write_only load at a fixed rate on the source, lag measured with a heartbeat row.
Channels: native, native-compressed (slave_compressed_protocol), tunnel (wirelab tunnel).
Scenarios: 1 lag vs RTT at --qps; 2 max sustainable load (search); 3 wire bandwidth by load
with no rate cap; 4 (opt-in) drop the wire mid-load and check that replication heals.
After every point the replica catches up and CHECKSUM TABLE must match.
--quick: RTTs 0,100ms,250ms, 15 s points, 20 s search probes, a short search (≤ 20 min)`

// replicationFlags are the study's flags; the load is in QPS (--qps, --loads) and the link
// rate is --rate-cap, so --rate (a link rate elsewhere in wirelab) is refused with a hint.
type replicationFlags struct {
	channels, scenarios, rateCap, delay, rtt, rtts, loads, shaper, out, randType, compress, pool *string
	qps, tables, tableSize, threads, bisect, searchMax, level                                    *int
	duration, searchDur, abortLag, catchUp, faultAt, faultFor                                    *time.Duration
	factor                                                                                       *float64
	quick, checkWire, awake, noWait                                                              *bool
	rate                                                                                         *string
}

func addReplicationFlags(fs *flag.FlagSet) *replicationFlags {
	return &replicationFlags{
		awake:     addAwakeFlag(fs),
		noWait:    addNoWaitFlag(fs),
		channels:  fs.String("channels", "native,native-compressed,tunnel", "channels to compare, a subset of native,native-compressed,tunnel"),
		scenarios: fs.String("scenarios", "1,2,3", "scenarios to run: 1 lag-vs-rtt, 2 max-load, 3 bandwidth, 4 fault (opt-in)"),
		rateCap:   fs.String("rate-cap", "2mbit", "the wire's bandwidth per direction in scenarios 1, 2 and 4: "+link.RateForm),
		delay:     fs.String("delay", "", "one-way delay of scenarios 2, 3 and 4 (default 125ms); not with --rtt"),
		rtt:       fs.String("rtt", "", "round trip of scenarios 2, 3 and 4 (= 2×--delay, default 250ms); not with --delay"),
		rtts:      fs.String("rtts", "0,50ms,100ms,250ms,500ms", "scenario 1: round-trip times, comma-separated"),
		qps:       fs.Int("qps", 300, "scenario 1 (and 4) load in sysbench queries per second (6 per transaction)"),
		loads:     fs.String("loads", "300,600,1200,2400", "scenario 3: loads in QPS, comma-separated"),
		duration:  fs.Duration("duration", 60*time.Second, "load window of each point of scenarios 1, 3 and 4"),
		searchDur: fs.Duration("search-duration", 60*time.Second, "load window of each scenario 2 probe"),
		factor:    fs.Float64("search-factor", 1.5, "scenario 2: each probe of the climb is this many times the last (> 1)"),
		bisect:    fs.Int("search-bisect", 3, "scenario 2: bisection steps once the limit is bracketed"),
		searchMax: fs.Int("search-max", 12000, "scenario 2: highest load probed, QPS"),
		abortLag:  fs.Duration("abort-lag", 30*time.Second, "stop a point early once lag passes this (it is unbounded)"),
		catchUp:   fs.Duration("catchup-timeout", 5*time.Minute, "how long the replica may take to catch up after a point"),
		tables:    fs.Int("tables", 10, "sysbench --tables"),
		tableSize: fs.Int("table-size", 10000, "sysbench --table-size (rows per table)"),
		threads:   fs.Int("threads", 4, "sysbench threads serving the fixed rate"),
		randType:  fs.String("rand-type", "uniform", "sysbench --rand-type: uniform, gaussian, special, pareto"),
		shaper:    fs.String("shaper", "auto", "how delay is made: "+link.ShaperForm),
		compress:  fs.String("tunnel-compress", "zstd", "tunnel --compress: zstd, auto or off"),
		level:     fs.Int("tunnel-level", 0, "tunnel --level (zstd 1..22; 0 = the tunnel's default)"),
		checkWire: fs.Bool("check-wire", true, "measure the wire (RTT, loss, iperf3) after every change of it and record it"),
		faultAt:   fs.Duration("fault-at", 5*time.Second, "scenario 4: when the wire drops, into the load"),
		faultFor:  fs.Duration("fault-for", 3*time.Second, "scenario 4: how long the wire drops everything"),
		pool:      fs.String("buffer-pool", "512M", "innodb_buffer_pool_size of each server"),
		out:       fs.String("out", "", "directory for results.json, results.csv and the report (default results/replication-<time>)"),
		quick:     fs.Bool("quick", false, "RTTs 0,100ms,250ms; loads 300,1200,2400; 15 s points; 20 s probes, ×2 climb, 2 bisections; no wire check"),
		rate:      fs.String("rate", "", "not used by this study: the link rate is --rate-cap and the load is --qps"),
	}
}

func studyReplication(p *Process, args []string) error {
	fs := newFlagSet(p, "study replication", replicationHelp,
		"wirelab study replication --quick\nwirelab study replication --channels native,tunnel --scenarios 2 --search-duration 90s")
	f := addReplicationFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("study replication: unexpected argument %q", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	if *f.quick {
		quick := map[string]string{"rtts": "0,100ms,250ms", "loads": "300,1200,2400", "duration": "15s",
			"search-duration": "20s", "search-factor": "2", "search-bisect": "2", "abort-lag": "10s", "check-wire": "false"}
		for k, v := range quick {
			if !set[k] {
				if err := fs.Set(k, v); err != nil {
					return err
				}
			}
		}
	}
	o, err := f.options()
	if err != nil {
		return &UsageError{fmt.Errorf("study replication: %w", err)}
	}
	if err := requireRoot(p); err != nil {
		return err
	}
	if err := preflight(p, o.Shaper, link.Condition{RateBps: o.RateCapBps, Delay: o.Delay}); err != nil {
		return err
	}
	fmt.Fprintf(p.Stderr, "study replication: channels %s, scenarios %s, wire %s / %s RTT; results in %s\n",
		*f.channels, *f.scenarios, link.FormatRate(o.RateCapBps), 2*o.Delay, o.OutDir)
	soft, hard, stop := interruptContexts(p)
	defer stop()
	idle, release := keepAwake(p, *f.awake)
	defer release()
	environment := func(ctx context.Context, l *lab.Lab) result.Environment {
		e := study.Environment(ctx, l)
		e.CPUIdle = idle
		return e
	}
	start := time.Now()
	run, err := replication.Run(soft, hard, o, replication.Env{Runner: p.Runner, Logger: p.Logger, StateDir: p.StateDir,
		Self: p.Self, Progress: p.Stderr, Environment: environment, Command: measureCommand("replication"), NoWait: *f.noWait})
	if run != nil && len(run.Points) > 0 {
		abs, _ := filepath.Abs(o.OutDir)
		for _, h := range replication.Headlines(run.Points) {
			fmt.Fprintln(p.Stdout, h)
		}
		fmt.Fprintf(p.Stdout, "%d points in %s; report: %s\n", len(run.Points), time.Since(start).Round(time.Second), filepath.Join(abs, "report.md"))
		if run.Interrupted {
			fmt.Fprintln(p.Stdout, "interrupted: the report holds the points finished before Ctrl-C")
		}
	}
	if err != nil {
		return fmt.Errorf("replication: %w", err)
	}
	return nil
}

// options validates every flag, naming it, before anything touches the kernel.
func (f *replicationFlags) options() (replication.Options, error) {
	o := replication.Options{Rule: replication.DefaultRule, Tables: *f.tables, TableSize: *f.tableSize,
		Threads: *f.threads, RandType: *f.randType, BufferPool: *f.pool, TunnelLevel: *f.level,
		Duration: *f.duration, SearchDuration: *f.searchDur, SearchFactor: *f.factor, SearchBisect: *f.bisect,
		SearchMaxQPS: *f.searchMax, AbortLag: *f.abortLag, CatchUpTimeout: *f.catchUp, LagQPS: *f.qps,
		CheckWire: *f.checkWire, Fault: replication.Fault{At: *f.faultAt, For: *f.faultFor}}
	var err error
	if *f.rate != "" {
		return o, fmt.Errorf("--rate %q: this study's link rate is --rate-cap (e.g. --rate-cap 2mbit) and its load is --qps / --loads in queries per second", *f.rate)
	}
	if o.Channels, err = replication.ParseChannels(*f.channels); err != nil {
		return o, err
	}
	if o.Scenarios, err = parseScenarios(*f.scenarios); err != nil {
		return o, err
	}
	if o.RateCapBps, err = link.ParseRate(*f.rateCap); err != nil {
		return o, fmt.Errorf("--rate-cap: %w", err)
	}
	switch {
	case *f.delay != "" && *f.rtt != "":
		return o, fmt.Errorf("--delay and --rtt both given: --rtt is 2×--delay, give one")
	case *f.delay != "":
		if o.Delay, err = parseDelay("--delay", *f.delay); err != nil {
			return o, err
		}
	case *f.rtt != "":
		rtt, err := parseDelay("--rtt", *f.rtt)
		if err != nil {
			return o, err
		}
		o.Delay = rtt / 2
	default:
		o.Delay = 125 * time.Millisecond
	}
	for _, s := range splitList(*f.rtts) {
		d, err := parseDelay("--rtts", s)
		if err != nil {
			return o, err
		}
		o.RTTs = append(o.RTTs, d)
	}
	if len(o.RTTs) == 0 && hasScenario(o.Scenarios, 1) {
		return o, fmt.Errorf("--rtts is empty: want round-trip times like 0,100ms,250ms")
	}
	for _, s := range splitList(*f.loads) {
		q, err := strconv.Atoi(s)
		if err != nil || q < replication.QueriesPerTxn || q > 1_000_000 {
			return o, fmt.Errorf("--loads %q: %q is not a load; want QPS values %d..1000000, e.g. 300,1200", *f.loads, s, replication.QueriesPerTxn)
		}
		o.Loads = append(o.Loads, q)
	}
	if len(o.Loads) == 0 && hasScenario(o.Scenarios, 3) {
		return o, fmt.Errorf("--loads is empty: want QPS values like 300,1200")
	}
	checks := []struct {
		bad bool
		msg string
	}{
		{o.LagQPS < replication.QueriesPerTxn || o.LagQPS > 1_000_000, fmt.Sprintf("--qps %d: want %d..1000000 (sysbench queries per second, 6 per transaction)", o.LagQPS, replication.QueriesPerTxn)},
		{o.Duration < 5*time.Second, fmt.Sprintf("--duration %s: want at least 5s (lag is judged over the second half)", o.Duration)},
		{o.SearchDuration < 5*time.Second, fmt.Sprintf("--search-duration %s: want at least 5s", o.SearchDuration)},
		{!(o.SearchFactor > 1 && o.SearchFactor <= 10), fmt.Sprintf("--search-factor %g: want more than 1, at most 10", o.SearchFactor)},
		{o.SearchBisect < 0 || o.SearchBisect > 10, fmt.Sprintf("--search-bisect %d: want 0..10", o.SearchBisect)},
		{o.SearchMaxQPS < 60 || o.SearchMaxQPS > 1_000_000, fmt.Sprintf("--search-max %d: want 60..1000000", o.SearchMaxQPS)},
		{o.AbortLag < 0, fmt.Sprintf("--abort-lag %s: want 0 (never) or more", o.AbortLag)},
		{o.CatchUpTimeout < 10*time.Second, fmt.Sprintf("--catchup-timeout %s: want at least 10s", o.CatchUpTimeout)},
		{o.Tables < 1 || o.Tables > 1000, fmt.Sprintf("--tables %d: want 1..1000", o.Tables)},
		{o.TableSize < 1 || o.TableSize > 100_000_000, fmt.Sprintf("--table-size %d: want 1..100000000", o.TableSize)},
		{o.Threads < 1 || o.Threads > 1024, fmt.Sprintf("--threads %d: want 1..1024", o.Threads)},
		{!randTypes[o.RandType], fmt.Sprintf("--rand-type %q: want one of %s", o.RandType, keys(randTypes))},
		{o.TunnelLevel < 0 || o.TunnelLevel > 22, fmt.Sprintf("--tunnel-level %d: want 0 (default) or 1..22", o.TunnelLevel)},
		{o.Fault.At < 0 || o.Fault.For < time.Second || o.Fault.At+o.Fault.For >= o.Duration, fmt.Sprintf(
			"--fault-at %s --fault-for %s: want the drop (≥ 1s) to end inside --duration %s", o.Fault.At, o.Fault.For, o.Duration)},
	}
	for _, c := range checks {
		if c.bad {
			return o, fmt.Errorf("%s", c.msg)
		}
	}
	switch *f.compress {
	case "zstd", "auto", "off":
		o.TunnelCompress = *f.compress
	default:
		return o, fmt.Errorf("--tunnel-compress %q: want zstd, auto or off", *f.compress)
	}
	switch sh := strings.ToLower(strings.TrimSpace(*f.shaper)); sh {
	case "auto", "":
		o.Shaper = link.ShaperAuto
	case link.ShaperNetem, link.ShaperNfqueue:
		o.Shaper = sh
	default:
		return o, fmt.Errorf("--shaper %q: want %s", *f.shaper, link.ShaperForm)
	}
	o.OutDir = *f.out
	if o.OutDir == "" {
		o.OutDir = filepath.Join("results", "replication-"+time.Now().Format("20060102-150405"))
	}
	if err := os.MkdirAll(o.OutDir, 0o755); err != nil {
		return o, fmt.Errorf("--out %s: cannot create it: %w", o.OutDir, err)
	}
	probe := filepath.Join(o.OutDir, ".wirelab-write-test")
	if err := os.WriteFile(probe, nil, 0o644); err != nil {
		return o, fmt.Errorf("--out %s: not writable: %w", o.OutDir, err)
	}
	_ = os.Remove(probe)
	return o, nil
}

// parseScenarios parses "1,2,3": each 1..4, no repeats, run in the order given.
func parseScenarios(s string) ([]int, error) {
	const form = "comma-separated numbers: 1 lag-vs-rtt, 2 max-load, 3 bandwidth, 4 fault"
	seen := map[int]bool{}
	var out []int
	for _, f := range splitList(s) {
		n, err := strconv.Atoi(f)
		if err != nil || replication.ScenarioNames[n] == "" {
			return nil, fmt.Errorf("--scenarios %q: %q is not a scenario; want %s", s, f, form)
		}
		if seen[n] {
			return nil, fmt.Errorf("--scenarios %q: %d appears twice; want %s", s, n, form)
		}
		seen[n] = true
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--scenarios is empty: want %s", form)
	}
	return out, nil
}

func hasScenario(ss []int, n int) bool {
	for _, s := range ss {
		if s == n {
			return true
		}
	}
	return false
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// parseDelay parses a delay ("125ms", "0"); 0..10 s.
func parseDelay(flagName, s string) (time.Duration, error) {
	if s == "0" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 || d > 10*time.Second {
		return 0, fmt.Errorf("%s %q: want a duration 0..10s like 125ms", flagName, s)
	}
	return d, nil
}
