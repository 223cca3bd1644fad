package replication

import (
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wirelab/wirelab/internal/flagx"
	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/sysbench"
)

// Flags are the study's own flags, registered by AddFlags and turned into Options by
// Apply. The wire's flags are link's and the tunnel's knobs are tunnel's; a command wires
// the three together.
type Flags struct {
	channels                                                  string
	channelsGiven                                             bool
	scenarios, rtts, loads, randType, pool, precision         string
	qps, tables, tableSize, threads, searchMax                int
	duration, searchDur, abortLag, catchUp, faultAt, faultFor time.Duration
	factor                                                    float64
	checkWire                                                 bool
}

// AddFlags registers the study's flags on fs.
func AddFlags(fs *flag.FlagSet) *Flags {
	f := &Flags{}
	fs.StringVar(&f.scenarios, "scenarios", "1,2,3", "scenarios to run: 1 lag-vs-rtt, 2 max-load, 3 bandwidth, 4 fault (opt-in)")
	fs.StringVar(&f.rtts, "rtts", "0,50ms,100ms,250ms,500ms", "scenario 1: round-trip times, comma-separated")
	fs.IntVar(&f.qps, "qps", 300, "scenario 1 (and 4) load in sysbench queries per second (6 per transaction)")
	fs.StringVar(&f.loads, "loads", "300,600,1200,2400", "scenario 3: loads in QPS, comma-separated")
	fs.DurationVar(&f.duration, "duration", 60*time.Second, "load window of each point of scenarios 1, 3 and 4")
	fs.DurationVar(&f.searchDur, "search-duration", 60*time.Second, "load window of each scenario 2 probe")
	fs.Float64Var(&f.factor, "search-factor", 1.2, "scenario 2: each probe of the climb is this many times the last (> 1)")
	fs.StringVar(&f.precision, "precision", "5%", "scenario 2: search until the limit's 95% interval is within ± this share of it (or its probe budget is spent)")
	fs.IntVar(&f.searchMax, "search-max", 12000, "scenario 2: highest load probed, QPS")
	fs.DurationVar(&f.abortLag, "abort-lag", 30*time.Second, "stop a point early once lag passes this (it is unbounded)")
	fs.DurationVar(&f.catchUp, "catchup-timeout", 5*time.Minute, "how long the replica may take to catch up after a point")
	fs.IntVar(&f.tables, "tables", 10, "sysbench --tables")
	fs.IntVar(&f.tableSize, "table-size", 10000, "sysbench --table-size (rows per table)")
	fs.IntVar(&f.threads, "threads", 4, "sysbench threads serving the fixed rate")
	fs.StringVar(&f.randType, "rand-type", "uniform", "sysbench --rand-type: "+strings.Join(sysbench.RandTypes, ", "))
	fs.BoolVar(&f.checkWire, "check-wire", true, "measure the wire (RTT, loss, iperf3) after every change of it and record it")
	fs.DurationVar(&f.faultAt, "fault-at", 5*time.Second, "scenario 4: when the wire drops, into the load")
	fs.DurationVar(&f.faultFor, "fault-for", 3*time.Second, "scenario 4: how long the wire drops everything")
	fs.StringVar(&f.pool, "buffer-pool", "512M", "each server's data cache: innodb_buffer_pool_size (MariaDB), shared_buffers (PostgreSQL)")
	fs.Func("channels", "channels to compare, a subset of native,native-compressed,tunnel "+
		"(default: every channel the engine has; mariadb native,native-compressed,tunnel, postgres native,tunnel)", func(s string) error {
		f.channels, f.channelsGiven = s, true
		return nil
	})
	return f
}

// Apply parses the flags into o, whose Engine the command has set, naming the flag on a
// bad value; Validate then checks the values against each other.
func (f *Flags) Apply(o *Options) error {
	o.Rule, o.Tables, o.TableSize, o.Threads = DefaultRule, f.tables, f.tableSize, f.threads
	o.RandType, o.BufferPool, o.CheckWire = f.randType, f.pool, f.checkWire
	o.Duration, o.SearchDuration, o.SearchFactor, o.SearchMaxQPS = f.duration, f.searchDur, f.factor, f.searchMax
	o.AbortLag, o.CatchUpTimeout, o.LagQPS = f.abortLag, f.catchUp, f.qps
	o.Fault = Fault{At: f.faultAt, For: f.faultFor}
	chans := f.channels
	if !f.channelsGiven {
		chans = ChannelList(ChannelsFor(o.Engine))
	}
	var err error
	if o.Channels, err = ParseChannels(chans); err != nil {
		return err
	}
	if o.Scenarios, err = parseScenarios(f.scenarios); err != nil {
		return err
	}
	if o.Precision, err = parsePercent("--precision", f.precision, 0.5, 50); err != nil {
		return err
	}
	if o.RTTs, err = link.ParseRTTs("--rtts", f.rtts); err != nil {
		return err
	}
	o.Loads = nil
	for _, s := range flagx.Split(f.loads) {
		q, err := strconv.Atoi(s)
		if err != nil || q < QueriesPerTxn || q > 1_000_000 {
			return fmt.Errorf("--loads %q: %q is not a load; want QPS values %d..1000000, e.g. 300,1200", f.loads, s, QueriesPerTxn)
		}
		o.Loads = append(o.Loads, q)
	}
	return nil
}

// Validate checks every value a flag can get wrong, naming the flag and the accepted form.
func (o Options) Validate() error {
	if err := CheckChannels(o.Engine, o.Channels); err != nil {
		return err
	}
	if err := lab.CheckBufferPool(o.BufferPool); err != nil {
		return err
	}
	if err := sysbench.CheckRandType(o.RandType); err != nil {
		return err
	}
	checks := []struct {
		bad bool
		msg string
	}{
		{len(o.RTTs) == 0 && slices.Contains(o.Scenarios, 1), "--rtts is empty: want round-trip times like 0,100ms,250ms"},
		{len(o.Loads) == 0 && slices.Contains(o.Scenarios, 3), "--loads is empty: want QPS values like 300,1200"},
		{o.LagQPS < QueriesPerTxn || o.LagQPS > 1_000_000, fmt.Sprintf("--qps %d: want %d..1000000 (sysbench queries per second, 6 per transaction)", o.LagQPS, QueriesPerTxn)},
		{o.Duration < 5*time.Second, fmt.Sprintf("--duration %s: want at least 5s (lag is judged over the second half)", o.Duration)},
		{o.SearchDuration < 5*time.Second, fmt.Sprintf("--search-duration %s: want at least 5s", o.SearchDuration)},
		{!(o.SearchFactor > 1 && o.SearchFactor <= 10), fmt.Sprintf("--search-factor %g: want more than 1, at most 10", o.SearchFactor)},
		{o.SearchMaxQPS < 60 || o.SearchMaxQPS > 1_000_000, fmt.Sprintf("--search-max %d: want 60..1000000", o.SearchMaxQPS)},
		{o.AbortLag < 0, fmt.Sprintf("--abort-lag %s: want 0 (never) or more", o.AbortLag)},
		{o.CatchUpTimeout < 10*time.Second, fmt.Sprintf("--catchup-timeout %s: want at least 10s", o.CatchUpTimeout)},
		{o.Threads < 1 || o.Threads > 1024, fmt.Sprintf("--threads %d: want 1..1024", o.Threads)},
		{o.Fault.At < 0 || o.Fault.For < time.Second || o.Fault.At+o.Fault.For >= o.Duration, fmt.Sprintf(
			"--fault-at %s --fault-for %s: want the drop (≥ 1s) to end inside --duration %s", o.Fault.At, o.Fault.For, o.Duration)},
	}
	for _, c := range checks {
		if c.bad {
			return fmt.Errorf("%s", c.msg)
		}
	}
	return sysbench.CheckDataSet(o.Tables, o.TableSize)
}

// ChannelList is channels as --channels spells them.
func ChannelList(cs []Channel) string {
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
	for _, f := range flagx.Split(s) {
		n, err := strconv.Atoi(f)
		if err != nil || ScenarioNames[n] == "" {
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
