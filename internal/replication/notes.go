package replication

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/tunnel"
)

// spec is what results.json records the user asked for. Extra["engine"] also tells the
// report which engine's words to use ("WAL" or "binlog").
func (o Options) spec() result.Spec {
	var series, rtts, loads, chans []string
	for _, n := range o.Scenarios {
		series = append(series, ScenarioNames[n])
	}
	for _, d := range o.RTTs {
		rtts = append(rtts, d.String())
	}
	for _, q := range o.Loads {
		loads = append(loads, strconv.Itoa(q))
	}
	for _, c := range o.Channels {
		chans = append(chans, string(c))
	}
	return result.Spec{Workload: Workload, Threads: []int{o.Threads}, DurationS: o.Duration.Seconds(), Repeat: 1,
		Tables: o.Tables, TableSize: o.TableSize, Series: series, LinkRateBps: o.Link.RateBps,
		LinkDelayMs: float64(o.Link.Delay) / float64(time.Millisecond),
		Extra: map[string]string{"engine": string(o.kind()), "channels": strings.Join(chans, ","), "rtts": strings.Join(rtts, ","),
			"lag_qps": strconv.Itoa(o.LagQPS), "loads_qps": strings.Join(loads, ","),
			"search_duration": o.SearchDuration.String(), "search_factor": strconv.FormatFloat(o.SearchFactor, 'g', -1, 64),
			"search_precision": strconv.FormatFloat(o.Precision, 'g', -1, 64), "abort_lag": o.AbortLag.String(),
			"tunnel_compress": string(o.Tunnel.Compress), "tunnel_level": strconv.Itoa(o.Tunnel.Level), "tunnel_mux": string(o.Tunnel.Mux),
			"tunnel_group_wait": o.Tunnel.GroupWait.String(), "tunnel_binlog": string(o.tunnelBinlog()), "rand_type": o.RandType,
			"bounded_rule": o.Rule.String()}}
}

// notes are the study's rules, stated once in results.json and the report, in the
// engine's words.
func (o Options) notes() []string {
	pg := o.kind() == engine.Postgres
	t := TermsFor(o.kind())
	lagSource, where := "Seconds_Behind_Master", "the source"
	if pg {
		lagSource, where = "pg_stat_replication's replay_lag", "the primary (the source)"
	}
	logRate := "binlog Mbit/s is the growth of the source's binlog files over the same window."
	if pg {
		logRate = "WAL Mbit/s (results.json's binlog_mbit_s) is the WAL the primary generated over the same window: " +
			"the growth of pg_current_wal_insert_lsn(), as pg_wal_lsn_diff counts it."
	}
	check := fmt.Sprintf("After every point the replica must catch up (within %s) and CHECKSUM TABLE of every sbtest table must match the source, or the point is failed.", o.CatchUpTimeout)
	if pg {
		check = fmt.Sprintf("After every point the standby must replay up to the primary's WAL insert position (LSN) read after the load, within %s, "+
			"and every sbtest table's row count and md5 of its rows (in primary-key order) must match the primary's, or the point is failed.", o.CatchUpTimeout)
	}
	out := []string{
		"Bounded-lag rule: " + o.Rule.String() + ". A probe whose lag passes " + o.AbortLag.String() +
			" is stopped early and counts as unbounded.",
		"Lag is measured, not read from " + lagSource + ": a heartbeat row on " + where + " is set to this process's clock every 100 ms " +
			"and read on the replica every 100 ms; lag = now − the timestamp the replica has applied (one machine, one clock). " +
			"The heartbeat adds ten small transactions per second to the " + t.Log + " of every channel.",
		fmt.Sprintf("QPS is sysbench's count: an %s transaction is %d queries (BEGIN, two updates, a delete, an insert, COMMIT); "+
			"the load is open loop (sysbench --rate = QPS ÷ %d transactions/s, %d threads) and runs in the server host over the unix socket, "+
			"so the wire carries only replication.", Workload, QueriesPerTxn, QueriesPerTxn, o.Threads),
		"wire Mbit/s is the source→replica direction (transmit counter of the wire host's interface facing the replica) averaged over the load window; " +
			logRate,
		fmt.Sprintf("max-load search: per channel, the first probe is 85%% of the capacity its earlier points predict (the link's rate ÷ the wire bytes one query took), "+
			"probes climb by ×%g until one fails; the limit is then the load at which a probe passes half the time, fitted to every probe's outcome "+
			"at the load it delivered (a probit in log load, its spread from 1.5%% to 12%% of the load, posterior median and 95%% interval; "+
			"the load delivered is sysbench's QPS, since --rate starts transactions at random, exponential gaps and a probe delivers its target ± about 1/√transactions), "+
			"and each further probe goes to the current fit "+
			"until the interval is within ±%.0f%% or %d probes were placed there; a passing probe the source could not deliver (achieved < 90%% of target) ends the search.",
			o.SearchFactor, 100*o.Precision, edgeProbes),
		check,
	}
	if !pg {
		return append(out, fmt.Sprintf("Channels: native = CHANGE MASTER to the source across the wire; native-compressed = the same with slave_compressed_protocol=ON; "+
			"tunnel = CHANGE MASTER to a wirelab tunnel entry on the replica's loopback, exit next to the source (%s, mutual TLS). "+
			"All use MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=1, slave_net_timeout=10.", o.tunnelArgs()), o.groupWaitNote(), o.binlogNote())
	}
	return append(out,
		fmt.Sprintf("Channels: PostgreSQL physical streaming replication; native = primary_conninfo to the primary across the wire (%s:%d); "+
			"tunnel = primary_conninfo to a wirelab tunnel entry on the standby's loopback (127.0.0.1:%d), exit next to the primary (%s, mutual TLS). "+
			"A switch is ALTER SYSTEM SET primary_conninfo and pg_reload_conf() on the standby: the WAL receiver reconnects and asks for the WAL from the standby's own LSN, "+
			"so nothing is skipped or replayed twice; the new connection re-sends the current 16 MB WAL segment from its start, and the study waits until the standby has received it again before the next point. "+
			"The standby streams through a physical replication slot (%s), with wal_retrieve_retry_interval=1s; "+
			"the primary runs wal_writer_delay=10ms, because with synchronous_commit=off a WAL sender sends only WAL the WAL writer has flushed.",
			lab.HostAddr[lab.Server], o.kind().Port(), lab.TunnelEntryPort, o.tunnelArgs(), PostgresSlot),
		o.groupWaitNote(),
		"native-compressed is not available on PostgreSQL: its replication protocol has no compression (wal_compression only shrinks the full-page images inside the WAL), "+
			"so the tunnel is the compressed channel.",
		"Checkpoints are kept out of the run: with full_page_writes=on (the default, kept) the first change of a page after a checkpoint writes the whole 8 kB page "+
			"into the WAL, so a point just after one replicates several times the WAL per query of a point long after it, "+
			"and when a point ran, not its channel, would decide it. "+
			"So the primary runs checkpoint_timeout=1h and max_wal_size=8GB, and before the first point, over the unshaped wire, every row of every table is updated twice "+
			"(k+1, then k-1: the data is unchanged) and the tables are vacuumed, which gives every heap and index page its full-page image since the base backup's checkpoint. "+
			"Every point then measures the steady WAL of its load; a production primary with checkpoints every few minutes sends more, in bursts after each one.")
}

// copyNote says how the replica got its copy of the data set and that it matched.
func (o Options) copyNote(took time.Duration) string {
	took = took.Round(100 * time.Millisecond)
	if o.kind() == engine.Postgres {
		return fmt.Sprintf("The standby is a pg_basebackup of the primary (-X stream, creating slot %s) taken from inside the replica host, so the copy crossed the unshaped wire, "+
			"sysbench prepare included; the row counts and md5 of all %d tables matched before the first point (backup, start and catch-up took %s).",
			PostgresSlot, o.Tables, took)
	}
	return fmt.Sprintf("The replica was built by replication itself: the source's binlog from its first event (GTID, empty slave position), "+
		"sysbench prepare included; CHECKSUM TABLE of all %d tables matched before the first point (copy took %s over the unshaped wire).", o.Tables, took)
}

// tunnelArgs are the tunnel's settings as the notes name them.
func (o Options) tunnelArgs() string {
	return fmt.Sprintf("--compress %s, --mux %s, --group-wait %s", o.Tunnel.Compress, o.Tunnel.Mux, o.Tunnel.GroupWait)
}

// tunnelBinlog is the exit's --binlog mode (the tunnel's default when unset).
func (o Options) tunnelBinlog() tunnel.BinlogMode {
	if o.Tunnel.Binlog == "" {
		return tunnel.BinlogRecode
	}
	return o.Tunnel.Binlog
}

// binlogNote says whether the tunnel's exit recodes the binlog dump, and what that keeps.
func (o Options) binlogNote() string {
	if o.tunnelBinlog() == tunnel.BinlogRaw {
		return "The tunnel's exit sends the binlog's event packets as they come (--tunnel-binlog raw)."
	}
	return "The tunnel's exit recodes the binlog dump (--tunnel-binlog recode): in each event packet whose CRC32 checks, the packet length, sequence id, " +
		"log position (when it follows from the last event's) and CRC32 leave as zeros and the entry computes them again, so the replica receives the source's bytes " +
		"exactly and checks binlog_checksum (CRC32) as before; they change with every event, so compressed they cost the tunnel about a third of its bytes. " +
		"--tunnel-binlog raw sends the packets as they come."
}

// groupWaitNote says what the tunnel's group wait does to the stream and its lag.
func (o Options) groupWaitNote() string {
	w := o.Tunnel.GroupWait
	if w.IsZero() {
		return "The tunnel sends what it reads at once (--tunnel-group-wait 0): a frame per read of the stream, mostly one transaction."
	}
	what := "up to " + w.D.String()
	if w.Auto {
		what = fmt.Sprintf("up to %.0f%% of the link's round trip (the lowest smoothed RTT TCP reported over the last 10-20 s)", 100*tunnel.GroupWaitAutoShare)
	}
	return "The tunnel groups the stream as DTLE does (its study set GroupTimeout to twice the link's delay less 10 ms): " +
		"what it reads waits " + what + " for more before it leaves as one frame, or less once a frame's worth is ready; " +
		"a replica's lag grows by at most that wait. --tunnel-group-wait 0 sends each read at once."
}
