package report

import (
	"math"
	"time"

	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/result"
)

// runFixture is `wirelab run --rate 20mbit --delay 5ms --threads 1,4,16,64`, with one
// point on a wire that failed its check and one failed point.
func runFixture() *result.Run {
	r := &result.Run{Schema: result.Schema, Tool: "wirelab 0.1.0", Study: "run", RunID: "run-20mbit",
		Started: fixtureStart, Finished: fixtureStart.Add(3 * time.Minute),
		Environment: fixtureEnv("htb+netem", "rate 20mbit, delay 5ms", "htb rate 20Mbit ceil 20Mbit; netem delay 5ms"),
		Spec:        result.Spec{Workload: "oltp_read_write", Threads: []int{1, 4, 16, 64, 128}, DurationS: 30, WarmupS: 5, Repeat: 1, Tables: 4, TableSize: 100000, LinkRateBps: 20e6, LinkDelayMs: 5}}
	r.Environment.Link = link.Directions(link.Condition{RateBps: 20e6, Delay: 5 * time.Millisecond}, "htb+netem",
		map[string]string{"client": "to-client", "server": "to-server"})
	tps := []float64{38.2, 149.5, 411.8, 452.3, 0}
	for i, th := range []int{1, 4, 16, 64, 128} {
		t := tps[i]
		down, up := t*5200, t*1900
		p := result.Point{Study: "run", Series: "20mbit", LinkRateBps: 20e6, LinkDelayMs: 5, Transport: "tcp", Channel: "direct",
			Workload: "oltp_read_write", Threads: th, TPS: t, QPS: t * 20, LatAvgMs: 26.1 * float64(th) / 1, LatP95Ms: math.Round(float64(th)/math.Max(t, 1)*1000*1.3*100) / 100,
			WireBytesPerSUp: up, WireBytesPerSDown: down, LinkUtilization: down * 8 / 20e6, CPUServer: t * 0.0011, CPUClient: t * 0.0004,
			DurationS: 30, WarmupS: 5, TPSCV: 0.03,
			WireCheck: &result.WireCheck{AskedRateBps: 20e6, UpBps: 19.4e6, DownBps: 19.5e6, AskedRTTMs: 10, RTTMinMs: 10.1, RTTMedianMs: 10.3, RTTP99Ms: 10.9, OK: true, Verdict: "ok"}}
		switch {
		case p.LinkUtilization >= 0.8:
			p.Bottleneck, p.BottleneckWhy = "network", "link 86% busy server→client"
		default:
			p.Bottleneck, p.BottleneckWhy = "latency", "each transaction waits 2 RTTs"
		}
		if th == 16 {
			p.WireCheck = &result.WireCheck{AskedRateBps: 20e6, UpBps: 14.1e6, DownBps: 14.3e6, AskedRTTMs: 10, RTTMedianMs: 10.4, OK: false, Verdict: "rate 14.3mbit read back, asked 20mbit"}
		}
		if th == 128 {
			p.Failed, p.FailReason = true, "sysbench: too many connections"
		}
		withProfile(&p, 2)
		if p.Profile != nil {
			p.Profile.RoundTrips = 2 // "each transaction waits 2 RTTs"; QPS counts statements
		}
		r.Points = append(r.Points, p)
	}
	return r
}

// transportFixture carries the French article's sysbench results (2 threads).
func transportFixture() *result.Run {
	r := &result.Run{Schema: result.Schema, Tool: "wirelab 0.1.0", Study: "transport", RunID: "socket-vs-tcp",
		Started: fixtureStart, Finished: fixtureStart.Add(21 * time.Minute),
		Environment: fixtureEnv("htb", "unlimited", "no qdisc"),
		Spec:        result.Spec{Workload: "oltp_read_only", Threads: []int{2}, DurationS: 300, WarmupS: 5, Repeat: 1, Tables: 10, TableSize: 1000000}}
	for _, c := range []struct {
		tr             string
		tps, qps, p95  float64
		wire, cpuS, bn string
	}{
		{"socket", 1159.13, 33614.79, 2.18, "", "", "server-cpu"},
		{"local-tcp", 900.29, 26108.54, 2.81, "", "", "server-cpu"},
		{"remote-tcp", 326.32, 9463.20, 7.84, "w", "", "latency"},
		{"remote-socket", 259.16, 7515.59, 9.73, "w", "", "latency"},
	} {
		p := result.Point{Study: "transport", Series: c.tr, Transport: c.tr, Channel: "direct", Workload: "oltp_read_only", Threads: 2,
			TPS: c.tps, QPS: c.qps, LatP95Ms: c.p95, LatAvgMs: 2000 / c.tps, CPUServer: c.tps * 0.00082, CPUClient: c.tps * 0.00031,
			Bottleneck: c.bn, DurationS: 300, WarmupS: 5}
		for i := 0; i < 305; i++ {
			// Per-second TPS that wanders a few percent and holds each swing for seconds.
			w := 1 + 0.03*math.Sin(float64(i)/7+float64(len(c.tr))) + 0.01*math.Sin(float64(i)*2.3)
			p.Seconds = append(p.Seconds, result.Second{T: float64(i + 1), TPS: c.tps * w, QPS: c.qps * w, LatP95Ms: c.p95, Warmup: i < 5})
		}
		if c.tr == "local-tcp" {
			p.CPUServer, p.CPUClient = c.tps*0.00098, c.tps*0.00044
		}
		if c.wire != "" {
			p.WireBytesPerSDown, p.WireBytesPerSUp = c.tps*14200, c.tps*1650
			p.CPUServer, p.CPUClient = c.tps*0.00101, c.tps*0.00047
			if c.tr == "remote-socket" {
				p.CPUClient = c.tps * 0.00088 // socat on the client side
			}
			p.LinkDelayMs = 0.1
		}
		withProfile(&p, 32)
		r.Points = append(r.Points, p)
	}
	return r
}

// replicationFixture follows DTLE's three scenarios on a 2 Mbit/s link, with lag per
// second and one checksum mismatch.
func replicationFixture() *result.Run {
	r := &result.Run{Schema: result.Schema, Tool: "wirelab 0.1.0", Study: "replication", RunID: "repl-weak",
		Started: fixtureStart, Finished: fixtureStart.Add(96 * time.Minute),
		Environment: fixtureEnv("htb+netem", "rate 2mbit, delay 125ms", "htb rate 2Mbit; netem delay 125ms"),
		Spec:        result.Spec{Workload: "oltp_write_only", Threads: []int{4}, DurationS: 120, WarmupS: 0, Repeat: 1, Tables: 10, TableSize: 10000}}
	pt := func(series, ch string, ex map[string]float64, lag func(t float64) float64) result.Point {
		p := result.Point{Study: "replication", Series: series, Channel: ch, LinkRateBps: 2e6, LinkDelayMs: ex["rtt_ms"] / 2,
			Workload: "oltp_write_only", Threads: 4, QPS: ex["achieved_qps"], DurationS: 120,
			WireBytesPerSDown: ex["wire_mbit_s"] * 1e6 / 8,
			Replication: &result.ReplicationStats{RTTMs: ex["rtt_ms"], TargetQPS: ex["target_qps"], LagMaxS: ex["lag_max_s"],
				LagP99S: ex["lag_p99_s"], BinlogMbitS: ex["binlog_mbit_s"], ChecksumOK: ex["checksum_ok"] == 1, Bounded: ex["bounded"] == 1}}
		if lag != nil {
			for i := 0; i < 120; i += 2 {
				p.Seconds = append(p.Seconds, result.Second{T: float64(i), QPS: ex["achieved_qps"], Lag: lag(float64(i))})
			}
		}
		return p
	}
	for _, rtt := range []float64{50, 100, 250, 500} {
		for _, ch := range []string{"native", "tunnel"} {
			lagMax := 0.2 + rtt/1000*1.1
			if ch == "tunnel" {
				lagMax = 0.3 + rtt/1000*2.4
			}
			var lag func(float64) float64
			if rtt == 500 {
				lm := lagMax
				lag = func(t float64) float64 { return lm * (0.6 + 0.4*math.Abs(math.Sin(t/7))) }
			}
			r.Points = append(r.Points, pt("lag-vs-rtt", ch, map[string]float64{"rtt_ms": rtt, "target_qps": 300, "achieved_qps": 300,
				"lag_max_s": lagMax, "lag_p99_s": lagMax * 0.8, "binlog_mbit_s": 1.47, "checksum_ok": 1, "bounded": 1}, lag))
		}
	}
	for _, load := range []float64{200, 367, 450, 600, 718, 800} {
		for _, ch := range []string{"native", "tunnel"} {
			limit := 367.0
			if ch == "tunnel" {
				limit = 718
			}
			bounded := 1.0
			lagMax := 1.2
			if load > limit {
				bounded, lagMax = 0, 30+load/10
			}
			wire := load * 0.00505
			if ch == "tunnel" {
				wire = load * 0.00185
			}
			// Open loop: the source applies its target whatever the replica does.
			ex := map[string]float64{"rtt_ms": 500, "target_qps": load, "achieved_qps": load,
				"lag_max_s": lagMax, "lag_p99_s": lagMax * 0.9, "binlog_mbit_s": load * 0.00503, "wire_mbit_s": math.Min(wire, 1.95), "checksum_ok": 1, "bounded": bounded}
			var lag func(float64) float64
			if load == 800 {
				slope := (load - limit) / 200
				lag = func(t float64) float64 { return slope * t }
			}
			if ch == "tunnel" && load == 600 {
				ex["checksum_ok"] = 0
			}
			r.Points = append(r.Points, pt("max-load", ch, ex, lag))
		}
	}
	for _, load := range []float64{100, 300, 1000, 3000} {
		for _, ch := range []string{"native", "native-compressed", "tunnel"} {
			per := map[string]float64{"native": 0.00505, "native-compressed": 0.0026, "tunnel": 0.0017}[ch]
			r.Points = append(r.Points, pt("bandwidth", ch, map[string]float64{"rtt_ms": 500, "target_qps": load, "achieved_qps": load,
				"lag_max_s": 0.9, "binlog_mbit_s": load * 0.00503, "wire_mbit_s": load * per * (1 + 0.03*math.Log10(load)), "checksum_ok": 1, "bounded": 1}, nil))
		}
	}
	return r
}

// withProfile gives a fixture point the per-transaction profile a schema-2 run records:
// packets from its bytes (full frames down, small requests up) and the machine's CPU as
// the two processes plus 20% for the kernel.
func withProfile(p *result.Point, cores int) {
	p.Profile = result.NewProfile(p, p.WireBytesPerSUp/300, p.WireBytesPerSDown/1400, (p.CPUServer+p.CPUClient)*1.2, cores)
}

// bandwidthPostgresFixture is `study bandwidth --engine postgres`: PostgreSQL has no
// protocol compression, so N2's series go through the tunnel; the environment names the
// server and its wire settings.
func bandwidthPostgresFixture() *result.Run {
	r := &result.Run{Schema: result.Schema, Tool: "wirelab 0.1.0", Study: "bandwidth", RunID: "bw-postgres",
		Started: fixtureStart, Finished: fixtureStart.Add(9 * time.Minute),
		Environment: fixtureEnv("htb", "rate 20mbit; unlimited", ""),
		Spec: result.Spec{Workload: "oltp_read_only", Threads: []int{1, 8, 32}, DurationS: 5, WarmupS: 1, Repeat: 1, Tables: 4, TableSize: 100000,
			Extra: map[string]string{"tunnel": "--compress auto --level auto --mux on"}},
		Notes: []string{"N2 on PostgreSQL: protocol compression is not available (the protocol has none); the N2 series go through wirelab's tunnel instead (entry in the client host, exit in the server host, --compress auto)."}}
	r.Environment.MariaDBVersion = ""
	r.Environment.Server = &result.ServerFacts{Engine: "postgres", Version: "15.14 (Debian 15.14-0+deb12u1)",
		Settings: []result.Setting{{Name: "ssl", Value: "on"}, {Name: "max_connections", Value: "2100"}, {Name: "synchronous_commit", Value: "off"}}}
	tps := map[bwKey][]float64{{20e6, plain}: {48, 55, 56}, {0, plain}: {610, 1900, 2100}, {20e6, tunneled}: {61, 138, 152},
		{0, tunneled}: {240, 720, 880}, {20e6, encrypted}: {46, 54, 55}, {0, encrypted}: {450, 1500, 1750}}
	for _, k := range []bwKey{{20e6, plain}, {0, plain}, {20e6, tunneled}, {0, tunneled}, {20e6, encrypted}, {0, encrypted}} {
		for i, th := range []int{1, 8, 32} {
			p := bwPoint(k, th, 0, tps[k][i], 8)
			if k.v == tunneled {
				p.Channel = "tunnel"
			}
			if k.rate == 0 {
				p.LinkUtilization, p.Bottleneck = 0, "server-cpu"
			}
			r.Points = append(r.Points, p)
		}
	}
	return r
}
