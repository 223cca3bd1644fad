package result

// Profile is what one transaction costs at a measured point: the bytes and packets it puts
// on the wire each way, the request/response turns it needs and the CPU it takes on each
// side. With the threads, cores and link it was measured at, it is enough to predict the
// same workload on another link or machine (internal/model).
type Profile struct {
	// Frame bytes per transaction as the wire host's shaper counts them (Ethernet frames).
	WireBytesUp   float64 `json:"wire_bytes_up"`   // client -> server
	WireBytesDown float64 `json:"wire_bytes_down"` // server -> client
	// TCP payload bytes per transaction: frame bytes less HeaderBytesPerPacket per packet.
	PayloadBytesUp   float64 `json:"payload_bytes_up"`
	PayloadBytesDown float64 `json:"payload_bytes_down"`
	PacketsUp        float64 `json:"packets_up"`
	PacketsDown      float64 `json:"packets_down"`
	// RoundTrips is request/response turns per transaction: the driver's queries per
	// transaction (each statement, BEGIN and COMMIT included, waits for its reply; for
	// pgbench, its built-in script's statements).
	RoundTrips float64 `json:"round_trips"`
	// CPU-seconds per transaction: mysqld (+ the tunnel exit), the client (sysbench + the
	// tunnel entry), and the whole machine (both, plus the kernel's forwarding and softirq,
	// less the lab's delay line: LabCPUS).
	CPUServerS  float64 `json:"cpu_server_s"`
	CPUClientS  float64 `json:"cpu_client_s"`
	CPUMachineS float64 `json:"cpu_machine_s"`
	// LabCPUS is the lab's own delay line's CPU-seconds per transaction, measured on the
	// same point and left out of CPUMachineS.
	LabCPUS float64 `json:"lab_cpu_s,omitempty"`
	// Where it was measured.
	Threads int `json:"threads"`
	Cores   int `json:"cores"` // CPUs of the machine (client and server share them in the lab)
	// ServerCores and ClientCores are each side's own host's CPUs when they ran on separate
	// hosts (--hosts); Cores is then the server host's, whose CPU CPUMachineS counts.
	ServerCores int     `json:"server_cores,omitempty"`
	ClientCores int     `json:"client_cores,omitempty"`
	LinkRateBps int64   `json:"link_rate_bps"` // 0 = unlimited
	LinkRTTMs   float64 `json:"link_rtt_ms"`   // the wire's added round trip (2 × one-way delay)
	TPS         float64 `json:"tps"`
	LatAvgMs    float64 `json:"lat_avg_ms"`
}

// HeaderBytesPerPacket is the frame overhead of one TCP/IPv4 packet on the lab's veth:
// Ethernet 14 + IPv4 20 + TCP 20 + the timestamp option 12 bytes.
const HeaderBytesPerPacket = 66

// NewProfile derives the per-transaction profile from a point's averages. It returns nil
// when the point completed no transaction.
func NewProfile(p *Point, upPktsPerS, downPktsPerS, cpuMachine float64, cores int) *Profile {
	if p.TPS <= 0 {
		return nil
	}
	t := p.TPS
	pr := &Profile{
		WireBytesUp: p.WireBytesPerSUp / t, WireBytesDown: p.WireBytesPerSDown / t,
		PacketsUp: upPktsPerS / t, PacketsDown: downPktsPerS / t,
		RoundTrips: p.QPS / t,
		CPUServerS: p.CPUServer / t, CPUClientS: p.CPUClient / t, CPUMachineS: cpuMachine / t,
		Threads: p.Threads, Cores: cores, LinkRateBps: p.LinkRateBps,
		LinkRTTMs: 2 * p.LinkDelayMs, TPS: p.TPS, LatAvgMs: p.LatAvgMs,
	}
	pr.PayloadBytesUp = max(0, pr.WireBytesUp-pr.PacketsUp*HeaderBytesPerPacket)
	pr.PayloadBytesDown = max(0, pr.WireBytesDown-pr.PacketsDown*HeaderBytesPerPacket)
	return pr
}

// NoProfileWhy says why none of pts (points of r) carries a per-transaction profile, in
// words a report or an error can show ("" when one does), and whether running the same
// measurement again with this version would record profiles. Each reason is the true
// one, so that nobody is told to re-run what a re-run would not change.
func NoProfileWhy(r *Run, pts []Point) (why string, rerunHelps bool) {
	completed, replication, replayed := false, len(pts) > 0, len(pts) > 0
	for _, p := range pts {
		if p.Profile != nil {
			return "", false
		}
		completed = completed || (!p.Failed && p.TPS > 0)
		replication = replication && p.Replication != nil
		replayed = replayed && p.Replay != nil
	}
	switch {
	case replayed:
		return "a replay's sessions are not a fixed number of clients in a closed loop: they start, idle and end as captured, " +
			"so the queueing model's one concurrency does not describe them, and its points carry no per-transaction profile " +
			"(their round trips per transaction and per session are in results.json)", false
	case replication:
		return "the replication study drives a fixed rate of queries (an open loop): its throughput is the rate it was given, " +
			"not what a transaction costs at a given concurrency, so its points carry no per-transaction profile", false
	case r.writtenSchema == 1:
		return "the results.json was written before schema 2, which added per-transaction profiles; a run of this version records them", true
	case r.Environment.Server != nil && r.Environment.Server.External:
		return "the server is an existing one (--server-dsn): wirelab cannot see its host's CPU, and a profile without the " +
			"server's work would predict that work free, so its points carry none", false
	case !completed:
		return "no point completed a transaction", false
	}
	return "no point had its server's CPU measured, which a profile needs", false
}
