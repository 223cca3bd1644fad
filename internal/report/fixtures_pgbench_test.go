package report

import (
	"time"

	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/result"
)

// runPgbenchFixture is `wirelab run --engine postgres --driver pgbench --workload
// select-only --rtt 20ms`: the 10-client figures are a real run's (on a 2-core box; the
// environment is the other fixtures').
func runPgbenchFixture() *result.Run {
	env := fixtureEnv("htb+nfqueue", "unlimited, delay 10ms", "delayer pid 28357: delay 10ms jitter 0s loss 0%")
	env.MariaDBVersion, env.SysbenchVersion, env.PgbenchVersion = "", "", "15.18 (Debian 15.18-0+deb12u1)"
	env.Server = &result.ServerFacts{Engine: "postgres", Version: "15.18 (Debian 15.18-0+deb12u1)",
		Settings: []result.Setting{{Name: "ssl", Value: "on"}, {Name: "max_connections", Value: "2100"}, {Name: "synchronous_commit", Value: "off"}}}
	r := &result.Run{Schema: result.Schema, Tool: "wirelab 0.1.0", Study: "run", RunID: "35c743",
		Started: fixtureStart, Finished: fixtureStart.Add(40 * time.Second), Environment: env,
		Spec: result.Spec{Workload: "select-only", Threads: []int{1, 10}, DurationS: 10, WarmupS: 2, Repeat: 1,
			Series: []string{"unlimited"}, LinkDelayMs: 10, Driver: "pgbench", Scale: 10}}
	r.Environment.Link = link.Directions(link.Condition{Delay: 10 * time.Millisecond}, "htb+nfqueue",
		map[string]string{"client": "to-client", "server": "to-server"})
	for _, c := range []struct {
		clients              int
		tps, lat, sd, cs, cc float64
	}{{1, 48.3, 20.69, 0.21, 0.012, 0.003}, {10, 482, 20.72, 0.36, 0.103, 0.023}} {
		p := result.Point{Study: "run", Series: "unlimited", LinkDelayMs: 10, Transport: "tcp", Channel: "direct",
			Workload: "select-only", Driver: "pgbench", Threads: c.clients, TPS: c.tps, QPS: c.tps,
			LatAvgMs: c.lat, LatStddevMs: c.sd, WireBytesPerSUp: c.tps * 129.2, WireBytesPerSDown: c.tps * 132.2,
			CPUServer: c.cs, CPUClient: c.cc, TPSCV: 0.009, DurationS: 10, WarmupS: 2,
			Bottleneck: "latency", BottleneckWhy: "link unlimited; server and client CPU low",
			WireCheck: &result.WireCheck{AskedRTTMs: 20, RTTMinMs: 19.997, RTTMedianMs: 20.138, RTTP99Ms: 21.143, OK: true,
				Verdict: "ok (rate unlimited: bandwidth not judged)"}}
		for s := 1; s <= 12; s++ {
			p.Seconds = append(p.Seconds, result.Second{T: float64(s), TPS: c.tps, QPS: c.tps, LatAvgMs: c.lat,
				WireUpBps: p.WireBytesPerSUp, WireDownBps: p.WireBytesPerSDown, CPUServer: c.cs, CPUClient: c.cc, Warmup: s <= 2})
		}
		p.Profile = result.NewProfile(&p, c.tps*1.002, c.tps*1.0015, 0.25*c.tps/482, 2)
		r.Points = append(r.Points, p)
	}
	return r
}
