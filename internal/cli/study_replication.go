package cli

import (
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/replication"
)

const replicationHelp = `the weak-network replication study (DTLE 2021): a source in the server host, a
replica behind the wire (default --rate 2mbit, --rtt 250ms), an oltp_write_only load at a
fixed rate on the source, lag measured with a heartbeat row.
--engine mariadb: GTID + ROW binlog; channels native, native-compressed
(slave_compressed_protocol), tunnel (wirelab tunnel).
--engine postgres: physical streaming replication from a base backup; channels native
and tunnel (PostgreSQL's replication protocol has no compression).
Scenarios: 1 lag vs RTT at --qps; 2 max sustainable load (a search to --precision, probes
repeated near the limit); 3 wire bandwidth by load with no rate cap; 4 (opt-in)
drop the wire mid-load and check that replication heals.
After every point the replica catches up and every table's checksum must match.
--quick: RTTs 0,100ms,250ms; loads 300,1200,2400; 15 s points, 20 s search probes (≤ 15 min)`

// replicationQuick are --quick's values for the replication study.
var replicationQuick = map[string]string{"rtts": "0,100ms,250ms", "loads": "300,1200,2400", "duration": "15s",
	"search-duration": "20s", "abort-lag": "10s", "check-wire": "false"}

// replicationFlags are the study's own flags; the wire is the shared link flags (--rate is
// the cap of scenarios 1, 2 and 4) and the tunnel the shared tunnel flags.
type replicationFlags struct {
	eng                                                       engineFlag
	channels                                                  *string // "" until --channels is given: the engine's channels
	channelsGiven                                             bool
	scenarios, rtts, loads, out, randType, pool, precision    *string
	qps, tables, tableSize, threads, searchMax                *int
	duration, searchDur, abortLag, catchUp, faultAt, faultFor *time.Duration
	factor                                                    *float64
	quick, checkWire, awake, noWait                           *bool
	link                                                      *link.Flags
	tunnel                                                    *tunnelFlags
	fs                                                        *flag.FlagSet // for which flags were given
}

func addReplicationFlags(fs *flag.FlagSet) *replicationFlags {
	f := &replicationFlags{
		fs:        fs,
		eng:       addEngineFlag(fs),
		awake:     addAwakeFlag(fs),
		noWait:    addNoWaitFlag(fs),
		channels:  new(string),
		scenarios: fs.String("scenarios", "1,2,3", "scenarios to run: 1 lag-vs-rtt, 2 max-load, 3 bandwidth, 4 fault (opt-in)"),
		rtts:      fs.String("rtts", "0,50ms,100ms,250ms,500ms", "scenario 1: round-trip times, comma-separated"),
		qps:       fs.Int("qps", 300, "scenario 1 (and 4) load in sysbench queries per second (6 per transaction)"),
		loads:     fs.String("loads", "300,600,1200,2400", "scenario 3: loads in QPS, comma-separated"),
		duration:  fs.Duration("duration", 60*time.Second, "load window of each point of scenarios 1, 3 and 4"),
		searchDur: fs.Duration("search-duration", 60*time.Second, "load window of each scenario 2 probe"),
		factor:    fs.Float64("search-factor", 1.2, "scenario 2: each probe of the climb is this many times the last (> 1)"),
		precision: fs.String("precision", "5%", "scenario 2: search until the limit's 95% interval is within ± this share of it (or its probe budget is spent)"),
		searchMax: fs.Int("search-max", 12000, "scenario 2: highest load probed, QPS"),
		abortLag:  fs.Duration("abort-lag", 30*time.Second, "stop a point early once lag passes this (it is unbounded)"),
		catchUp:   fs.Duration("catchup-timeout", 5*time.Minute, "how long the replica may take to catch up after a point"),
		tables:    fs.Int("tables", 10, "sysbench --tables"),
		tableSize: fs.Int("table-size", 10000, "sysbench --table-size (rows per table)"),
		threads:   fs.Int("threads", 4, "sysbench threads serving the fixed rate"),
		randType:  fs.String("rand-type", "uniform", "sysbench --rand-type: uniform, gaussian, special, pareto"),
		checkWire: fs.Bool("check-wire", true, "measure the wire (RTT, loss, iperf3) after every change of it and record it"),
		faultAt:   fs.Duration("fault-at", 5*time.Second, "scenario 4: when the wire drops, into the load"),
		faultFor:  fs.Duration("fault-for", 3*time.Second, "scenario 4: how long the wire drops everything"),
		pool:      fs.String("buffer-pool", "512M", "each server's data cache: innodb_buffer_pool_size (MariaDB), shared_buffers (PostgreSQL)"),
		out:       fs.String("out", "", "directory for results.json, results.csv and the report (default results/replication-<time>)"),
		quick:     fs.Bool("quick", false, "RTTs 0,100ms,250ms; loads 300,1200,2400; 15 s points; 20 s probes; no wire check"),
		link:      link.AddFlagsWith(fs, link.Defaults{Rate: "2mbit", RTT: "250ms"}),
		tunnel:    addTunnelFlags(fs, "zstd"),
	}
	fs.Func("channels", "channels to compare, a subset of native,native-compressed,tunnel "+
		"(default: every channel the engine has; mariadb native,native-compressed,tunnel, postgres native,tunnel)", func(s string) error {
		*f.channels, f.channelsGiven = s, true
		return nil
	})
	fs.Func("rate-cap", "the same as --rate (the wire's cap in scenarios 1, 2 and 4)", func(s string) error { return fs.Set("rate", s) })
	return f
}

func studyReplication(p *Process, args []string) error {
	fs := newFlagSet(p, "study replication", replicationHelp,
		"wirelab study replication --quick\nwirelab study replication --engine postgres --quick\n"+
			"wirelab study replication --channels native,tunnel --scenarios 2 --search-duration 90s")
	f := addReplicationFlags(fs)
	o, out, err := studyPreamble(p, fs, args, "replication", f.quick, replicationQuick, f.out, f.options)
	if err != nil {
		return err
	}
	if err := preflight(p, o.Shaper, o.Link); err != nil {
		return err
	}
	fmt.Fprintf(p.Stderr, "study replication: %s, channels %s, scenarios %s, wire %s; results in %s\n",
		o.Engine.Title(), channelList(o.Channels), *f.scenarios, o.Link, out)
	return runStudy(p, replication.New(o), measureOptions{Out: out, Awake: *f.awake, NoWait: *f.noWait})
}

// options validates every flag, naming it, before anything touches the kernel.
func (f *replicationFlags) options() (replication.Options, error) {
	o := replication.Options{Rule: replication.DefaultRule, Tables: *f.tables, TableSize: *f.tableSize,
		Threads: *f.threads, RandType: *f.randType, BufferPool: *f.pool,
		Duration: *f.duration, SearchDuration: *f.searchDur, SearchFactor: *f.factor,
		SearchMaxQPS: *f.searchMax, AbortLag: *f.abortLag, CatchUpTimeout: *f.catchUp, LagQPS: *f.qps,
		CheckWire: *f.checkWire, Fault: replication.Fault{At: *f.faultAt, For: *f.faultFor}}
	var err error
	if o.Engine, err = f.eng.kind(); err != nil {
		return o, err
	}
	if o.Link, o.Shaper, err = f.link.Condition(); err != nil {
		return o, err
	}
	if o.Tunnel, err = f.tunnel.options(); err != nil {
		return o, err
	}
	chans := *f.channels
	if !f.channelsGiven {
		chans = channelList(replication.ChannelsFor(o.Engine))
	}
	if o.Channels, err = replication.ParseChannels(chans); err != nil {
		return o, err
	}
	if err := replication.CheckChannels(o.Engine, o.Channels); err != nil {
		return o, err
	}
	if n := tunnelFlagGiven(f.fs); n != "" && !slices.Contains(o.Channels, replication.Tunnel) {
		return o, fmt.Errorf("--%s sets up the tunnel, and --channels %s has none: add tunnel to --channels or drop it", n, channelList(o.Channels))
	}
	if o.Scenarios, err = parseScenarios(*f.scenarios); err != nil {
		return o, err
	}
	if err := lab.CheckBufferPool(o.BufferPool); err != nil {
		return o, err
	}
	if o.Precision, err = parsePercent("--precision", *f.precision, 0.5, 50); err != nil {
		return o, err
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
		{o.SearchMaxQPS < 60 || o.SearchMaxQPS > 1_000_000, fmt.Sprintf("--search-max %d: want 60..1000000", o.SearchMaxQPS)},
		{o.AbortLag < 0, fmt.Sprintf("--abort-lag %s: want 0 (never) or more", o.AbortLag)},
		{o.CatchUpTimeout < 10*time.Second, fmt.Sprintf("--catchup-timeout %s: want at least 10s", o.CatchUpTimeout)},
		{o.Tables < 1 || o.Tables > 1000, fmt.Sprintf("--tables %d: want 1..1000", o.Tables)},
		{o.TableSize < 1 || o.TableSize > 100_000_000, fmt.Sprintf("--table-size %d: want 1..100000000", o.TableSize)},
		{o.Threads < 1 || o.Threads > 1024, fmt.Sprintf("--threads %d: want 1..1024", o.Threads)},
		{!randTypes[o.RandType], fmt.Sprintf("--rand-type %q: want one of %s", o.RandType, keys(randTypes))},
		{o.Fault.At < 0 || o.Fault.For < time.Second || o.Fault.At+o.Fault.For >= o.Duration, fmt.Sprintf(
			"--fault-at %s --fault-for %s: want the drop (≥ 1s) to end inside --duration %s", o.Fault.At, o.Fault.For, o.Duration)},
	}
	for _, c := range checks {
		if c.bad {
			return o, fmt.Errorf("%s", c.msg)
		}
	}
	return o, nil
}

// channelList is channels as --channels spells them.
func channelList(cs []replication.Channel) string {
	s := make([]string, len(cs))
	for i, c := range cs {
		s[i] = string(c)
	}
	return strings.Join(s, ",")
}

// parsePercent parses "5%" or "5" as 5 percent, returned as a share (0.05), within lo..hi percent.
func parsePercent(name, s string, lo, hi float64) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "%"), 64)
	if err != nil || v < lo || v > hi {
		return 0, fmt.Errorf("%s %q: want a percentage from %g%% to %g%%, e.g. 5%%", name, s, lo, hi)
	}
	return v / 100, nil
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

// parseDelay parses a round trip or delay ("125ms", "0"); 0..10 s.
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
