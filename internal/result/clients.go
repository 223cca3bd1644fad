package result

import (
	"github.com/wirelab/wirelab/internal/stats"
)

// ClientLoad is one client host's share of a point loaded from several (--hosts with more
// than one client): its threads and what its own load driver and sample agent measured.
// The point's own figures are the clients' merged: TPS, QPS and errors summed second by
// second, latency percentiles from the clients' histograms merged, wire bytes and client
// CPU summed; the server's CPU is sampled once, on the server host.
type ClientLoad struct {
	Host    string  `json:"host"`    // the inventory's name
	Threads int     `json:"threads"` // this client's share of the point's threads
	TPS     float64 `json:"tps"`
	QPS     float64 `json:"qps"`
	// Latency percentiles of this client's own histogram; 0 when it has none.
	LatP50Ms float64 `json:"lat_p50_ms,omitempty"`
	LatP95Ms float64 `json:"lat_p95_ms"`
	LatP99Ms float64 `json:"lat_p99_ms,omitempty"`
	Errors   int64   `json:"errors"`
	// Wire bytes per second on this client's shaped classes, per direction, and the CPU of
	// its load driver (cores).
	WireBytesPerSUp   float64 `json:"wire_bytes_per_s_up"`
	WireBytesPerSDown float64 `json:"wire_bytes_per_s_down"`
	CPUClient         float64 `json:"cpu_client"`
	// Cores are the client host's own (environment.hosts); 0 when its agent did not say.
	Cores int `json:"cores,omitempty"`
	// LabCost is what the delay line on this client's host cost (nil: none ran there);
	// the point's own LabCost is the one of its clients' that took the largest share.
	LabCost *LabCost `json:"lab_cost,omitempty"`
	// TPSSeconds is this client's TPS in each measured second (warm-up and the seconds
	// after the measured duration left out): the spread ClientsDisagree weighs.
	TPSSeconds []float64 `json:"tps_seconds,omitempty"`
}

// TPSPerThread is the client's TPS per thread each measured second: clients with unequal
// shares of the threads (the remainder goes to the first) compare on it.
func (c ClientLoad) TPSPerThread() []float64 {
	out := make([]float64, len(c.TPSSeconds))
	for i, x := range c.TPSSeconds {
		out[i] = x / float64(max(c.Threads, 1))
	}
	return out
}

// ClientsDisagree says whether a point's clients measured different throughputs per
// thread, beyond the spread each one's own seconds show: two clients disagree when their
// 95% intervals of TPS per thread (batch means of the per-second series,
// stats.SeriesMean) do not overlap. A series too short for an interval (under 6 measured
// seconds) is taken at its range instead: the clients disagree when every second of one
// lies beyond every second of the other. The report shows a point's per-client rows when
// this is true; it is the one place that decides it.
func ClientsDisagree(cs []ClientLoad) bool {
	type span struct{ lo, hi float64 }
	spans := make([]span, 0, len(cs))
	for _, c := range cs {
		xs := c.TPSPerThread()
		if len(xs) == 0 {
			continue
		}
		e := stats.SeriesMean(xs, 1/float64(max(c.Threads, 1)))
		if e.Known() {
			spans = append(spans, span{e.Mean - e.Half95(), e.Mean + e.Half95()})
		} else {
			spans = append(spans, span{e.Lo, e.Hi})
		}
	}
	for i := range spans {
		for j := i + 1; j < len(spans); j++ {
			if spans[i].hi < spans[j].lo || spans[j].hi < spans[i].lo {
				return true
			}
		}
	}
	return false
}

// BusiestClient is the client whose load driver used the largest share of its own host's
// cores, and whether one has its cores known: a point's client-side CPU verdict weighs
// that client, since one saturated client host bounds its share of the load while the
// others' idle cores would hide it in a sum.
func BusiestClient(cs []ClientLoad) (ClientLoad, bool) {
	var best ClientLoad
	found := false
	for _, c := range cs {
		if c.Cores <= 0 {
			continue
		}
		if !found || c.CPUClient/float64(c.Cores) > best.CPUClient/float64(best.Cores) {
			best, found = c, true
		}
	}
	return best, found
}
