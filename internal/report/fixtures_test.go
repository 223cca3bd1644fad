package report

import (
	"math"
	"time"

	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/result"
)

// The fixtures are hand-made but shaped like real runs. The bandwidth one carries the
// numbers of Percona's 2019 post (1Gb vs 10Gb), so its findings can be checked against
// what the post concludes.

var fixtureStart = time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)

func fixtureEnv(shaper, asked, read string) result.Environment {
	return result.Environment{Kernel: "6.8.0-45-generic", CPUs: 32, CPUModel: "AMD EPYC 7302P 16-Core Processor",
		MemoryBytes: 128 << 30, MariaDBVersion: "11.4.3-MariaDB", SysbenchVersion: "1.0.20",
		Shaper: shaper, LinkAsApplied: asked, LinkAsReadBack: read,
		CPUIdle:       "kept awake: /dev/cpu_dma_latency held at 0 µs while measuring; cpuidle intel_idle/menu",
		TCPCongestion: "bbr"}
}

var blogThreads = []int{1, 4, 16, 32, 64, 96, 128, 256, 512, 1024, 2048}

// blogTPS is the post's tables by series: 1Gb, 10Gb, each with compression and SSL.
var blogTPS = map[bwKey][]float64{
	{1e9, plain}:       {326.13, 1143.36, 2400.19, 2665.61, 2838.47, 2865.22, 2867.46, 2867.47, 2867.27, 2865.4, 2761.78},
	{1e10, plain}:      {394.4, 1544.73, 5647.73, 10256.11, 15762.59, 17626.77, 18525.91, 18529.4, 17901.67, 16953.76, 16393.84},
	{1e9, compressed}:  {198.33, 771.59, 2714, 3939.73, 4454.87, 4770.83, 5030.78, 5134.57, 5133.94, 5129.24, 5100.46},
	{1e10, compressed}: {216.25, 857.93, 3202.2, 5855.03, 8973.23, 9682.44, 10006.91, 9899.97, 9612.34, 9270.27, 9123.84},
	{1e9, encrypted}:   {295.19, 1070, 2351.81, 2630.53, 2822.34, 2837.04, 2837.21, 2837.12, 2836.28, 1830.11, 1019.23},
	{1e10, encrypted}:  {359.8, 1417.93, 5235.1, 9131.34, 8248.6, 7801.6, 7107.31, 4726.5, 3067.55, 1812.83, 1013.22},
}

// bytes per transaction on the wire (down, up) for oltp_read_only: 116 MiB/s at 2867 TPS.
var blogBytes = map[variant][2]float64{plain: {42418, 1800}, compressed: {19000, 900}, encrypted: {43500, 2000}, tunneled: {14500, 800}}

// bwPoint derives a plausible point from a TPS figure: wire, utilisation, CPU, latency
// and a verdict that follows the post's reading of each cell.
func bwPoint(k bwKey, threads, repeat int, tps float64, seconds int) result.Point {
	b := blogBytes[k.v]
	down, up := tps*b[0], tps*b[1]
	util := down * 8 / float64(k.rate)
	bn := "server-cpu"
	switch {
	case util >= 0.9:
		bn = "network"
	case k.v == compressed && threads >= 16:
		bn = "client-cpu"
	case threads <= 4:
		bn = "latency"
	}
	cpuS, cpuC := tps*0.0009, tps*0.0003
	if k.v == compressed {
		cpuS, cpuC = tps*0.0016, tps*0.0017
	}
	if k.v == encrypted {
		cpuS = tps * 0.0013
	}
	p := result.Point{Study: "bandwidth", Series: k.label(), LinkRateBps: k.rate, Compression: k.v == compressed,
		TLS: k.v == encrypted, Transport: "tcp", Channel: "direct", Workload: "oltp_read_only", Threads: threads,
		Repeat: repeat, TPS: tps, QPS: tps * 16, LatAvgMs: float64(threads) / tps * 1000,
		LatP95Ms: math.Round(float64(threads)/tps*1000*1.45*100) / 100, TPSCV: 0.012 + 0.001*float64(threads%7),
		WireBytesPerSUp: up, WireBytesPerSDown: down, LinkUtilization: util, CPUServer: cpuS, CPUClient: cpuC,
		Bottleneck: bn, DurationS: 300, WarmupS: 2,
		WireCheck: &result.WireCheck{AskedRateBps: k.rate, UpBps: float64(k.rate) * 0.97, DownBps: float64(k.rate) * 0.97, RTTMinMs: 0.1, RTTMedianMs: 0.15, RTTP99Ms: 0.3, OK: true, Verdict: "ok"}}
	withProfile(&p, 32)
	for i := 0; i < seconds; i++ {
		w := 1 + 0.015*math.Sin(float64(i)*1.7+float64(threads))
		if i < 2 {
			w = 0.6 + 0.2*float64(i)
		}
		d := math.Min(down*w, float64(k.rate)/8*0.985)
		p.Seconds = append(p.Seconds, result.Second{T: float64(i), TPS: tps * w, QPS: tps * w * 16, LatP95Ms: p.LatP95Ms,
			WireUpBps: up * w, WireDownBps: d, CPUServer: cpuS * w, CPUClient: cpuC * w, Warmup: i < 2})
	}
	return p
}

func bandwidthFixture() *result.Run {
	r := &result.Run{Schema: result.Schema, Tool: "wirelab 0.1.0", Study: "bandwidth", RunID: "bw-2019-repro",
		Started: fixtureStart, Finished: fixtureStart.Add(5*time.Hour + 37*time.Minute),
		Environment: fixtureEnv("htb", "rate 1gbit; rate unlimited (10gbit NIC)", ""),
		Spec: result.Spec{Workload: "oltp_read_only", Threads: blogThreads, DurationS: 300, WarmupS: 2, Repeat: 1,
			Tables: 20, TableSize: 10000000, Series: []string{"slow", "fast", "slow+compression", "fast+compression", "slow+tls", "fast+tls"}}}
	// Shaped as `wirelab study bandwidth` shapes it: the slow link with HTB, then a bare wire.
	lab := map[string]string{"client": "to-client", "server": "to-server"}
	r.Environment.Link = append(link.Directions(link.Condition{RateBps: 1e9}, "htb", lab), link.Directions(link.Condition{}, "none", lab)...)
	r.Environment.LinkAsReadBack = `to-client: qdisc htb 1: root refcnt 2 r2q 10 default 0x1 direct_packets_stat 0 direct_qlen 1000
to-client: qdisc pfifo 10: parent 1:1 limit 4954p
to-client: class htb 1:1 root leaf 10: prio 0 rate 1Gbit ceil 1Gbit burst 1250000b cburst 1250000b
to-server: qdisc htb 1: root refcnt 2 r2q 10 default 0x1 direct_packets_stat 0 direct_qlen 1000
to-server: qdisc pfifo 10: parent 1:1 limit 4954p
to-server: class htb 1:1 root leaf 10: prio 0 rate 1Gbit ceil 1Gbit burst 1250000b cburst 1250000b`
	for _, k := range []bwKey{{1e9, plain}, {1e10, plain}, {1e9, compressed}, {1e10, compressed}, {1e9, encrypted}, {1e10, encrypted}} {
		for i, th := range blogThreads {
			r.Points = append(r.Points, bwPoint(k, th, 0, blogTPS[k][i], 20))
		}
	}
	return r
}

// bandwidthRepeatFixture is a small --repeat 3 run: mean ± CI in the cells, one failed
// repeat, one point measured on a wire that failed its check, and TLS whose cost at 1 and
// 16 threads is inside the repeats' spread (its interval includes 1.00×).
func bandwidthRepeatFixture() *result.Run {
	r := &result.Run{Schema: result.Schema, Tool: "wirelab 0.1.0", Study: "bandwidth", RunID: "bw-repeat",
		Started: fixtureStart, Finished: fixtureStart.Add(42 * time.Minute),
		Environment: fixtureEnv("htb+netem", "rate 20mbit delay 1ms; unlimited delay 1ms", "htb rate 20Mbit; netem delay 1ms"),
		Spec:        result.Spec{Workload: "oltp_read_only", Threads: []int{1, 16, 64}, DurationS: 30, WarmupS: 5, Repeat: 3, Tables: 4, TableSize: 100000},
		Notes:       []string{"calibration: 20mbit chosen so that 16 threads fill the slow link"}}
	base := map[bwKey][]float64{{20e6, plain}: {210, 520, 540}, {0, plain}: {260, 2900, 6100}, {20e6, compressed}: {150, 790, 1010},
		{20e6, encrypted}: {207, 515, 420}}
	for _, k := range []bwKey{{20e6, plain}, {0, plain}, {20e6, compressed}, {20e6, encrypted}} {
		for i, th := range []int{1, 16, 64} {
			for rep := 1; rep <= 3; rep++ {
				tps := base[k][i] * (1 + 0.02*float64(rep-2)*float64(1+i%2))
				p := bwPoint(bwKey{k.rate, k.v}, th, rep, tps, 0)
				p.Series = k.label()
				p.LinkDelayMs = 1
				if k.rate == 0 {
					p.LinkUtilization = 0
					p.Bottleneck = "server-cpu"
					if th == 1 {
						p.Bottleneck = "latency"
					}
				} else {
					perTxn := map[variant]float64{plain: 4500, compressed: 2100, encrypted: 4600}[k.v]
					p.WireBytesPerSDown = tps * perTxn
					p.LinkUtilization = p.WireBytesPerSDown * 8 / 20e6
					switch {
					case p.LinkUtilization >= 0.9:
						p.Bottleneck = "network"
					case th == 1:
						p.Bottleneck = "latency"
					default:
						p.Bottleneck = "client-cpu"
					}
				}
				if k == (bwKey{20e6, compressed}) && th == 64 && rep == 2 {
					p.Failed, p.FailReason, p.TPS = true, "sysbench exited 1: Lost connection to server during query", 0
				}
				if k == (bwKey{0, plain}) && th == 16 && rep == 3 {
					p.WireCheck = &result.WireCheck{OK: false, Verdict: "RTT p99 9.8 ms, asked 2 ms"}
				}
				r.Points = append(r.Points, p)
			}
		}
	}
	return r
}
