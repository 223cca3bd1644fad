package report

import (
	"github.com/wirelab/wirelab/internal/result"
)

// runClientsFixture is runFixture loaded from two client hosts, app1 and app2: each
// point's threads split between them, the merged figures the fixture's. At 16 threads
// app2 is slower per thread beyond the spread of its seconds (a busy client), so that
// point gets per-client rows; at the others the clients agree.
func runClientsFixture() *result.Run {
	r := runFixture()
	r.RunID = "run-20mbit-two-clients"
	var pts []result.Point
	for _, p := range r.Points {
		if p.Failed || p.Threads < 2 {
			continue // a thread count below the clients is refused before the run
		}
		share := []float64{0.5, 0.5}
		if p.Threads == 16 {
			share = []float64{0.6, 0.4}
		}
		for i, host := range []string{"app1", "app2"} {
			tps := p.TPS * share[i]
			c := result.ClientLoad{Host: host, Threads: p.Threads / 2, TPS: tps, QPS: p.QPS * share[i], LatP95Ms: p.LatP95Ms * (1 + 0.1*float64(i)),
				WireBytesPerSUp: p.WireBytesPerSUp * share[i], WireBytesPerSDown: p.WireBytesPerSDown * share[i], CPUClient: p.CPUClient * share[i]}
			for s := 0; s < 30; s++ {
				c.TPSSeconds = append(c.TPSSeconds, tps*(1+0.02*float64(s%3-1)))
			}
			p.Clients = append(p.Clients, c)
		}
		pts = append(pts, p)
	}
	r.Points = pts
	r.Spec.Threads = []int{4, 16, 64}
	return r
}
