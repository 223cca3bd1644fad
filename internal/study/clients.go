package study

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/metrics"
	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/stats"
)

// ClientHost is one of a backend's client hosts: Role is what Launcher, Dir, Exec and
// Sides take for it (ClientRole), Name what results.json and the report call it.
type ClientHost struct {
	Role, Name string
}

// Fleet is a Backend with several client hosts (remote.Backend over an inventory with
// more than one client). A closed-loop cell whose driver runs on the client (lab.Client)
// then runs one driver per client host, concurrently, each with its share of the cell's
// threads (SplitThreads), and the point is their merge (mergeLoads) with each client's
// own figures in Point.Clients. A backend that is not one, or has one client, runs the
// cell as it is.
type Fleet interface {
	Clients() []ClientHost
}

// ClientRole is the role of the i-th client host (0-based): lab.Client for the first,
// so a one-client backend and the lab name it as they always have, then client2,
// client3, ...
func ClientRole(i int) string {
	if i == 0 {
		return lab.Client
	}
	return fmt.Sprintf("%s%d", lab.Client, i+1)
}

// clientsOf are the client hosts cell c's load is split among: nil when there is one
// (the lab, a single client) or the cell's driver does not run on the client (transport's
// socket rows run on the server host).
func clientsOf(b Backend, c LoadCell) []ClientHost {
	f, ok := b.(Fleet)
	if !ok || c.ClientHost != lab.Client {
		return nil
	}
	if cs := f.Clients(); len(cs) > 1 {
		return cs
	}
	return nil
}

// SplitThreads divides threads among n client hosts: threads/n each, and the remainder
// one more to each of the first clients (7 on 3 clients: 3, 2, 2), so every thread asked
// for runs and the split is recorded per client. Fewer threads than clients is refused:
// a client with no thread would be a host named in the inventory that took no part.
func SplitThreads(threads, n int) ([]int, error) {
	if n < 1 {
		return nil, fmt.Errorf("split %d threads: no client host", threads)
	}
	if threads < n {
		return nil, fmt.Errorf("--threads %d: fewer threads than the %d client hosts of --hosts; each client runs at least one: "+
			"give every thread count at least %d, or list fewer clients in the inventory", threads, n, n)
	}
	out := make([]int, n)
	for i := range out {
		out[i] = threads / n
		if i < threads%n {
			out[i]++
		}
	}
	return out, nil
}

// CheckSplit refuses, before anything is made, thread counts that cannot be split among
// n client hosts (SplitThreads), naming the first.
func CheckSplit(threads []int, n int) error {
	if n <= 1 {
		return nil
	}
	for _, t := range threads {
		if _, err := SplitThreads(t, n); err != nil {
			return err
		}
	}
	return nil
}

// loadPart is one driver of a cell: where it runs and with how many threads.
type loadPart struct {
	host    ClientHost
	threads int
}

// partsOf are the drivers cell c runs: one per client host of a fleet, else the cell's
// own on its host.
func partsOf(b Backend, c LoadCell) ([]loadPart, error) {
	cs := clientsOf(b, c)
	if cs == nil {
		return []loadPart{{host: ClientHost{Role: c.ClientHost}, threads: c.Threads}}, nil
	}
	split, err := SplitThreads(c.Threads, len(cs))
	if err != nil {
		return nil, err
	}
	parts := make([]loadPart, len(cs))
	for i, h := range cs {
		parts[i] = loadPart{host: h, threads: split[i]}
	}
	return parts, nil
}

// runParts runs every part's driver concurrently, each with its share of c, and returns
// their loads in parts' order. They start in order, each once the one before has its
// pid (or has ended), so a plan prints them in order and the SSH sessions are not opened
// all at once. onStart gets the first part's pid. A failed part does not stop the others
// (each is bounded by the cell's time, and ctx stops all): the point fails with every
// client's error named.
func runParts(ctx context.Context, e *Env, drv Driver, c LoadCell, parts []loadPart, onStart func(int)) ([]*Load, error) {
	loads := make([]*Load, len(parts))
	errs := make([]error, len(parts))
	var wg sync.WaitGroup
	for i, pt := range parts {
		cc := c
		cc.ClientHost, cc.Threads = pt.host.Role, pt.threads
		started := make(chan struct{})
		var once sync.Once
		ready := func() { once.Do(func() { close(started) }) }
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer ready()
			ld, err := drv.Run(ctx, e, cc, func(pid int) {
				if i == 0 && onStart != nil {
					onStart(pid)
				}
				ready()
			})
			if ld == nil {
				ld = &Load{}
			}
			loads[i] = ld
			if err != nil {
				if pt.host.Name != "" {
					err = fmt.Errorf("client %s: %w", pt.host.Name, err)
				}
				errs[i] = err
			}
		}()
		select {
		case <-started:
		case <-ctx.Done():
		}
	}
	wg.Wait()
	return loads, errors.Join(errs...)
}

// mergeLoads is the loads of one cell's client hosts as one: each second's TPS, QPS,
// errors and reconnects summed over the clients (over the seconds every client reported),
// the second's 95th percentile the largest of the clients' (no histogram per second to
// merge: an upper bound, for the series only), and the totals summed, with the latency
// histograms merged (stats.Merge), so the point's percentiles are read from every
// transaction of every client, never averaged. A client without a summary leaves the
// merge without one; one without a histogram leaves it without a histogram.
func mergeLoads(loads []*Load) *Load {
	if len(loads) == 1 {
		return loads[0]
	}
	out := &Load{Ticks: make([]Tick, commonTicks(loads))}
	second := make([]Tick, len(loads))
	for i := range out.Ticks {
		for j, ld := range loads {
			second[j] = ld.Ticks[i]
		}
		out.Ticks[i] = mergeTicks(second)
	}
	out.Totals = mergeTotals(loads)
	for _, ld := range loads { // the merged seconds count once every client's clock runs
		if ld.Start.After(out.Start) {
			out.Start = ld.Start
		}
	}
	return out
}

// mergeTicks is one second of several client hosts' drivers as one (mergeLoads, and the
// live metrics' latest second): TPS, QPS, errors and reconnects summed, the 95th
// percentile the largest, the mean latency weighted by each one's TPS; T is the first
// one's.
func mergeTicks(ts []Tick) Tick {
	var t Tick
	var latSum float64
	for _, x := range ts {
		if t.T == 0 {
			t.T = x.T
		}
		t.TPS, t.QPS, t.Errors, t.Reconnects = t.TPS+x.TPS, t.QPS+x.QPS, t.Errors+x.Errors, t.Reconnects+x.Reconnects
		t.LatP95Ms = math.Max(t.LatP95Ms, x.LatP95Ms)
		latSum += x.LatAvgMs * x.TPS
	}
	if t.TPS > 0 {
		t.LatAvgMs = latSum / t.TPS
	}
	return t
}

// commonTicks is how many seconds every client reported: what the merge and each
// client's own figures are cut to.
func commonTicks(loads []*Load) int {
	n := math.MaxInt
	for _, ld := range loads {
		n = min(n, len(ld.Ticks))
	}
	return n
}

// mergeTotals sums the clients' summaries (nil when one has none); see mergeLoads.
func mergeTotals(loads []*Load) *Totals {
	m := &Totals{}
	var hs []stats.Histogram
	var latSum float64
	for _, ld := range loads {
		t := ld.Totals
		if t == nil {
			return nil
		}
		m.TPS, m.QPS, m.Errors, m.Reconnects = m.TPS+t.TPS, m.QPS+t.QPS, m.Errors+t.Errors, m.Reconnects+t.Reconnects
		m.LatMaxMs, m.LatP95Ms = math.Max(m.LatMaxMs, t.LatMaxMs), math.Max(m.LatP95Ms, t.LatP95Ms)
		latSum += t.LatAvgMs * t.TPS
		if t.Histogram != nil {
			hs = append(hs, *t.Histogram)
		}
	}
	if m.TPS > 0 {
		m.LatAvgMs = latSum / m.TPS
	}
	if len(hs) == len(loads) {
		h := stats.Merge(hs...)
		m.Histogram, m.LatP95Ms = &h, h.Percentile(95)
	}
	return m
}

// ClientSampler is a Sampler that also keeps each client host's own samples (its shaped
// classes and its load driver's CPU; the server's and machine's CPU are the shared
// server agent's), in Sides.Clients order; Stop's samples are their sum.
type ClientSampler interface {
	ClientSamples() [][]metrics.Sample
}

// clientLoads are each client's own figures of a merged point: its ticks and samples
// through FillSeries (cut to the seconds every client reported, as the merge is, so the
// point's TPS is the sum of the clients'), its percentiles from its own histogram, its
// host's cores from hosts (by name, role client).
func clientLoads(c LoadCell, parts []loadPart, loads []*Load, perClient [][]metrics.Sample, sampledAt time.Time, hosts []result.Host) []result.ClientLoad {
	n := commonTicks(loads)
	out := make([]result.ClientLoad, len(parts))
	for i, pt := range parts {
		q := result.Point{DurationS: c.Duration.Seconds(), WarmupS: c.Warmup.Seconds()}
		var ss []metrics.Sample
		if i < len(perClient) {
			ss = perClient[i]
		}
		ld := loads[i]
		ss, _ = alignSamples(ss, sampledAt, ld)
		FillSeries(&q, ld.Ticks[:n], ss, Window{Warmup: c.Warmup, End: c.Warmup + c.Duration, Trim: true})
		cl := result.ClientLoad{Host: pt.host.Name, Threads: pt.threads, TPS: q.TPS, QPS: q.QPS, LatP95Ms: q.LatP95Ms,
			WireBytesPerSUp: q.WireBytesPerSUp, WireBytesPerSDown: q.WireBytesPerSDown, CPUClient: q.CPUClient,
			TPSSeconds: q.MeasuredTPS()}
		for _, h := range hosts {
			if h.Role == "client" && h.Name == pt.host.Name {
				cl.Cores = h.Cores
			}
		}
		if t := ld.Totals; t != nil {
			cl.Errors = t.Errors
			if n == 0 {
				cl.TPS, cl.QPS = t.TPS, t.QPS
			}
			if t.Histogram != nil && !t.Histogram.Empty() {
				l := result.LatencyOf(*t.Histogram, t.LatMaxMs)
				cl.LatP50Ms, cl.LatP95Ms, cl.LatP99Ms = l.P50Ms, l.P95Ms, l.P99Ms
			}
		}
		out[i] = cl
	}
	return out
}
