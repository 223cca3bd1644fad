package result

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/wirelab/wirelab/internal/stats"
)

// Schema is the version of the results.json layout this wirelab writes. Schema 1 files
// (the replication figures in a map "extra") are still read: Read converts them (see migrate.go).
const Schema = 2

// Run is one results.json: one invocation of `wirelab run` or `wirelab study`.
type Run struct {
	Schema      int         `json:"schema"`
	Tool        string      `json:"tool"` // "wirelab <version>"
	Study       string      `json:"study"`
	RunID       string      `json:"run_id"`
	Started     time.Time   `json:"started"`
	Finished    time.Time   `json:"finished"`
	Interrupted bool        `json:"interrupted,omitempty"` // Ctrl-C: points are the finished ones
	Environment Environment `json:"environment"`
	Spec        Spec        `json:"spec"`
	Points      []Point     `json:"points"`
	Notes       []string    `json:"notes,omitempty"` // e.g. calibration choices, skipped cells

	// writtenSchema is the schema the file was read at, before migrating it: a schema 1
	// file has no profiles, and only a new run can add them.
	writtenSchema int

	// MaxLoads is the replication study's maximum sustainable load per channel (MaxLoads of
	// Points), written at the end of the run for readers of the file; the report computes
	// it again from the points, so files without it render the same.
	MaxLoads []Edge `json:"max_loads,omitempty"`
}

// Environment is where the run happened.
type Environment struct {
	Kernel          string `json:"kernel"`
	CPUs            int    `json:"cpus"`
	CPUModel        string `json:"cpu_model,omitempty"`
	MemoryBytes     int64  `json:"memory_bytes,omitempty"`
	MariaDBVersion  string `json:"mariadb_version"`
	SysbenchVersion string `json:"sysbench_version"`
	// PgbenchVersion is set when pgbench drove the load (--driver pgbench).
	PgbenchVersion string `json:"pgbench_version,omitempty"`
	Shaper         string `json:"shaper"`             // "htb", "htb+netem", "htb+nfqueue"
	LinkAsApplied  string `json:"link_as_applied"`    // the condition wirelab asked for
	LinkAsReadBack string `json:"link_as_read_back"`  // `tc -s qdisc` etc. as read back
	CPUIdle        string `json:"cpu_idle,omitempty"` // whether CPUs were kept out of deep idle
	// TCPCongestion is the TCP congestion control the hosts' connections used (the
	// kernel's default, which the lab's namespaces inherit): "bbr" paces its own sends
	// where there is no fq qdisc, "cubic" sends a window at once. Empty in older files.
	TCPCongestion string `json:"tcp_congestion_control,omitempty"`
	// Link is how the wire shaped each direction, in numbers (link.Directions): one entry
	// per direction and per link setting the run applied. Empty in older files, where the
	// report falls back on LinkAsApplied.
	Link []LinkDirection `json:"link,omitempty"`
	// Machine says whether another measurement or lab shared the machine with this run
	// (a 2-core box measures both); empty in schema-1 files.
	Machine *Machine `json:"machine,omitempty"`
	// Server is the database server the run measured (the first one a study started):
	// engine, version and the settings that shape its wire. Absent in files written
	// before PostgreSQL, where MariaDBVersion says it.
	Server *ServerFacts `json:"server,omitempty"`
	// Hosts are the machines the run measured on, each as its own agent read it: one in
	// the namespace lab, one per inventory host over --hosts. There, Kernel, CPUs,
	// CPUModel and MemoryBytes above are the server host's. Absent in older files.
	Hosts []Host `json:"hosts,omitempty"`
}

// ServerFacts are what the report says about a database server.
type ServerFacts struct {
	Engine   string    `json:"engine"` // "mariadb", "postgres"
	Version  string    `json:"version"`
	Settings []Setting `json:"settings,omitempty"`
	// External: wirelab did not start the server and cannot see its host, so no server
	// CPU is measured.
	External bool `json:"external,omitempty"`
}

// Setting is one server setting, by its engine's own name, as the server reports it.
type Setting struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// LinkDirection is one direction of the wire as wirelab set it up: the condition asked and
// the queue sizes its shapers derived from it.
type LinkDirection struct {
	Toward       string  `json:"toward"`   // the host this direction delivers to: "server", "client"
	Iface        string  `json:"iface"`    // the wire host's egress interface that shapes it
	Shaper       string  `json:"shaper"`   // as Environment.Shaper: "none", "htb", "htb+nfqueue", ...
	RateBps      int64   `json:"rate_bps"` // 0 = unlimited
	DelayMs      float64 `json:"delay_ms"` // one way
	JitterMs     float64 `json:"jitter_ms,omitempty"`
	LossPct      float64 `json:"loss_pct,omitempty"`
	BurstBytes   int     `json:"burst_bytes,omitempty"`   // HTB burst and cburst; 0 = no HTB
	QueuePackets int     `json:"queue_packets,omitempty"` // HTB's leaf queue (pfifo limit)
	// DelayQueuePackets is the delay line's queue: netem's limit or the NFQUEUE delayer's
	// --max-queue; 0 = no delay line.
	DelayQueuePackets int `json:"delay_queue_packets,omitempty"`
}

// Machine is what else ran on the machine while this run measured.
type Machine struct {
	// WaitedS is how long the run waited for another measurement's machine lock.
	WaitedS float64 `json:"waited_s"`
	// WaitedFor names the measurement it waited for ("study bandwidth, lab 4ee4e7, pid 812").
	WaitedFor string `json:"waited_for,omitempty"`
	// OtherLabs are the labs up (by hand or by a --no-lock run) when this run started.
	OtherLabs []string `json:"other_labs,omitempty"`
	// Exclusive is true when the run held the machine lock for all its points.
	Exclusive bool `json:"exclusive"`
}

// Spec is what the user asked for, after defaults.
type Spec struct {
	Workload    string   `json:"workload"`
	Threads     []int    `json:"threads"`
	DurationS   float64  `json:"duration_s"`
	WarmupS     float64  `json:"warmup_s"`
	Repeat      int      `json:"repeat"`
	Tables      int      `json:"tables"`
	TableSize   int      `json:"table_size"`
	Series      []string `json:"series"`
	LinkRateBps int64    `json:"link_rate_bps"`
	LinkDelayMs float64  `json:"link_delay_ms"`
	// Driver is the load driver, "sysbench" or "pgbench"; absent in older files (sysbench).
	Driver string `json:"driver,omitempty"`
	// Scale is pgbench's data set (pgbench -i -s: 100000 accounts per unit); with pgbench,
	// Tables and TableSize are 0.
	Scale int               `json:"scale,omitempty"`
	Extra map[string]string `json:"extra,omitempty"` // study-specific knobs
	// Margin is the equivalence margin the run's verdicts were judged with and where it
	// came from (MarginOf reads it; absent in older files: the default).
	Margin *Margin `json:"margin,omitempty"`
}

// Point is one measured cell of a study matrix.
type Point struct {
	Study        string  `json:"study"`
	Series       string  `json:"series"`        // e.g. "20mbit+compression"
	LinkRateBps  int64   `json:"link_rate_bps"` // 0 = unlimited
	LinkDelayMs  float64 `json:"link_delay_ms"` // one way
	LinkJitterMs float64 `json:"link_jitter_ms,omitempty"`
	LinkLossPct  float64 `json:"link_loss_pct,omitempty"`
	Compression  bool    `json:"compression"`
	TLS          bool    `json:"tls"`
	Transport    string  `json:"transport"` // "tcp", "socket", "local-tcp", "remote-socket", ...
	Channel      string  `json:"channel"`   // "direct", "tunnel", "native", ...
	Workload     string  `json:"workload"`  // a sysbench workload or a pgbench built-in script
	// Driver is the load generator, "sysbench" or "pgbench"; absent = sysbench (older
	// files, the replication study).
	Driver  string `json:"driver,omitempty"`
	Threads int    `json:"threads"`          // concurrent connections: sysbench threads, pgbench clients
	Repeat  int    `json:"repeat,omitempty"` // 1-based repetition index

	TPS      float64 `json:"tps"`
	QPS      float64 `json:"qps"`
	LatAvgMs float64 `json:"lat_avg_ms"`
	// LatP95Ms is the 95th percentile over the measured seconds: from LatHistogram when
	// the point has one, else (older files) the mean of sysbench's per-second 95th
	// percentiles, 0 with pgbench.
	LatP95Ms float64 `json:"lat_p95_ms"`
	// LatP50Ms, LatP99Ms: percentiles from LatHistogram; LatMaxMs the slowest
	// transaction, exact (the driver's own maximum). 0 = not measured (older files).
	LatP50Ms float64 `json:"lat_p50_ms,omitempty"`
	LatP99Ms float64 `json:"lat_p99_ms,omitempty"`
	LatMaxMs float64 `json:"lat_max_ms,omitempty"`
	// LatHistogram is every transaction's latency over the measured seconds (warm-up
	// left out): sysbench's --histogram, or pgbench's per-transaction log on the same
	// grid. Repeats merge it to give their percentiles (MergedLatency).
	LatHistogram *stats.Histogram `json:"lat_histogram,omitempty"`
	// LatStddevMs is the latency's standard deviation where the driver reports it (pgbench).
	LatStddevMs float64 `json:"lat_stddev_ms,omitempty"`
	Errors      int64   `json:"errors"`
	Reconnects  int64   `json:"reconnects"`
	TPSCV       float64 `json:"tps_cv"` // coefficient of variation of per-second TPS after warm-up

	// Wire bytes per second, measured on the wire host's egress interfaces.
	WireBytesPerSUp   float64 `json:"wire_bytes_per_s_up"`   // client -> server
	WireBytesPerSDown float64 `json:"wire_bytes_per_s_down"` // server -> client
	LinkUtilization   float64 `json:"link_utilization"`      // max over directions; 0 when unlimited
	CPUServer         float64 `json:"cpu_server"`            // cores
	CPUClient         float64 `json:"cpu_client"`            // cores
	Bottleneck        string  `json:"bottleneck"`            // network|server-cpu|client-cpu|latency|latency-or-server (an existing server, CPU unseen)
	BottleneckWhy     string  `json:"bottleneck_why"`

	DurationS float64 `json:"duration_s"`
	WarmupS   float64 `json:"warmup_s"` // seconds dropped from averages
	// LoadLeadS is how long after the wire and CPU sampler started the load driver's own
	// clock began (its clients connected): the samples of those seconds, to the nearest
	// whole one, are not in the series, so each second's wire bytes and CPU are the same
	// second's as its TPS. 0 where not measured (older files, the replication study).
	LoadLeadS  float64    `json:"load_lead_s,omitempty"`
	Failed     bool       `json:"failed,omitempty"`
	FailReason string     `json:"fail_reason,omitempty"`
	WireCheck  *WireCheck `json:"wire_check,omitempty"` // last `link check` before this point

	// Profile is what one transaction cost at this point (nil when no transaction
	// completed): the input of `wirelab predict`.
	Profile *Profile `json:"profile,omitempty"`
	// LabCost is what the lab's delay line cost during the point (nil without one).
	LabCost *LabCost `json:"lab_cost,omitempty"`
	// Replication holds the replication study's figures (nil in other studies).
	Replication *ReplicationStats `json:"replication,omitempty"`
	// Sync holds the sync study's figures (nil in other studies).
	Sync *SyncStats `json:"sync,omitempty"`
	// Replay holds a replay's own figures (`wirelab replay`; nil in other studies).
	Replay *ReplayStats `json:"replay,omitempty"`
	// Clients are the client hosts' own shares of a point loaded from several (one load
	// driver per client host, concurrently); absent with one client. The fields above are
	// their merge (ClientLoad).
	Clients []ClientLoad `json:"clients,omitempty"`
	// schema1Extra is schema 1's "extra" map, read only to migrate it.
	schema1Extra map[string]float64

	Seconds []Second `json:"seconds"`
}

// Second is one per-second sample of a point.
type Second struct {
	T           float64 `json:"t"` // seconds since the point started
	TPS         float64 `json:"tps"`
	QPS         float64 `json:"qps"`
	LatP95Ms    float64 `json:"lat_p95_ms"`
	LatAvgMs    float64 `json:"lat_avg_ms,omitempty"` // where the driver reports it each second (pgbench)
	Errors      float64 `json:"errors"`
	Reconnects  float64 `json:"reconnects"`
	WireUpBps   float64 `json:"wire_up_bytes_per_s"`
	WireDownBps float64 `json:"wire_down_bytes_per_s"`
	CPUServer   float64 `json:"cpu_server"`
	CPUClient   float64 `json:"cpu_client"`
	Lag         float64 `json:"lag_s,omitempty"` // replication lag at this second (replication study)
	Warmup      bool    `json:"warmup,omitempty"`
}

// WireCheck is what `wirelab link check` measured against what was asked.
type WireCheck struct {
	AskedRateBps int64   `json:"asked_rate_bps"`
	UpBps        float64 `json:"up_bps"`
	DownBps      float64 `json:"down_bps"`
	AskedRTTMs   float64 `json:"asked_rtt_ms"`
	RTTMinMs     float64 `json:"rtt_min_ms"`
	RTTMedianMs  float64 `json:"rtt_median_ms"`
	RTTP99Ms     float64 `json:"rtt_p99_ms"`
	AskedLossPct float64 `json:"asked_loss_pct"`
	LossPct      float64 `json:"loss_pct"`
	Undelayed    int64   `json:"undelayed_packets"` // packets the delayer could not delay
	OK           bool    `json:"ok"`
	Verdict      string  `json:"verdict"`
}

// Write stores r as dir/results.json (indented) and dir/results.csv.
func Write(dir string, r *Run) error {
	if r.Schema == 0 {
		r.Schema = Schema
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode results: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write results.json: %w", err)
	}
	return WriteCSV(filepath.Join(dir, "results.csv"), r.Points)
}

// Read loads dir/results.json, checks its schema and brings an older one up to date.
func Read(dir string) (*Run, error) { return ReadFile(filepath.Join(dir, "results.json")) }

// ReadFile is Read of a results file by its path.
func ReadFile(path string) (*Run, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read results: %w", err)
	}
	var r Run
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("decode %s: %w", path, err)
	}
	if r.Schema == 1 {
		var old struct {
			Points []struct {
				Extra map[string]float64 `json:"extra"`
			} `json:"points"`
		}
		if err := json.Unmarshal(b, &old); err != nil {
			return nil, fmt.Errorf("decode %s: %w", path, err)
		}
		for i := range old.Points {
			if i < len(r.Points) {
				r.Points[i].schema1Extra = old.Points[i].Extra
			}
		}
	}
	r.writtenSchema = r.Schema
	if err := migrate(&r); err != nil {
		return nil, err
	}
	return &r, nil
}

// MeasuredSeconds are the seconds that count in the point's averages: not the warm-up,
// and none after its measured duration (the window study.FillSeries averages over).
// Empty for a point without a per-second series.
func (p Point) MeasuredSeconds() []Second {
	end := p.WarmupS + p.DurationS + 0.5
	var out []Second
	for _, s := range p.Seconds {
		if !s.Warmup && (p.DurationS == 0 || s.T <= end) {
			out = append(out, s)
		}
	}
	return out
}

// MeasuredTPS is the per-second TPS of the MeasuredSeconds.
func (p Point) MeasuredTPS() []float64 {
	var xs []float64
	for _, s := range p.MeasuredSeconds() {
		xs = append(xs, s.TPS)
	}
	return xs
}
