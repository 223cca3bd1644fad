package model

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/stats"
)

// ErrNoProfile is returned when no point carries a per-transaction profile
// (result.NoProfileWhy says why).
var ErrNoProfile = errors.New("no point carries a per-transaction profile")

// Fit is one workload variant's cost per transaction, taken from measured points of the
// same workload, compression, TLS, transport and channel (on any links and thread counts):
// what the model needs to predict that variant elsewhere.
type Fit struct {
	Label  string         // the variant: "plain", "compression", "tls", ...
	Series []string       // the series the points came from, in run order
	Points []result.Point // the points with a profile

	// Medians over the points: bytes and round trips do not depend on the link.
	WireBytesUp, WireBytesDown float64
	RoundTrips                 float64
	// PerRoundTripS is the latency each round trip costs beyond the link's RTT and the CPU
	// (veth hops, wake-ups, the delayer's release), calibrated from points where neither
	// the link nor the CPU is saturated (see calibrate).
	PerRoundTripS float64
	// Overlap is the share of the lab machine's CPU per transaction that runs beside the
	// transaction rather than in its path (the kernel's softirq and ACKs on the other core,
	// samplers, mysqld's background threads): at one thread the lab measured 0.95 ms of
	// machine CPU per transaction in a 0.81 ms transaction. Calibrated with
	// PerRoundTripS; at most one of the two is non-zero.
	Overlap float64
	// Cores is the lab machine's CPU count, shared by client and server; on separate hosts
	// (ServerCores and ClientCores set, from profiles measured over --hosts) the server
	// host's.
	Cores                    int
	ServerCores, ClientCores int

	cpu []cpuAt // per thread count, ascending
}

// cpuAt is the CPU-seconds per transaction at one thread count: the lab machine's total and
// the server's and client's processes.
type cpuAt struct {
	threads                 int
	machine, server, client float64
}

// NewFit fits one variant from its points; points without a profile are skipped.
func NewFit(label string, pts []result.Point) (*Fit, error) {
	f := &Fit{Label: label}
	seen := map[string]bool{}
	var up, down, rt []float64
	for _, p := range pts {
		if p.Profile == nil || p.Failed || p.Profile.TPS <= 0 {
			continue
		}
		f.Points = append(f.Points, p)
		if !seen[p.Series] {
			seen[p.Series] = true
			f.Series = append(f.Series, p.Series)
		}
		up, down, rt = append(up, p.Profile.WireBytesUp), append(down, p.Profile.WireBytesDown), append(rt, p.Profile.RoundTrips)
		f.Cores = max(f.Cores, p.Profile.Cores)
		f.ServerCores, f.ClientCores = max(f.ServerCores, p.Profile.ServerCores), max(f.ClientCores, p.Profile.ClientCores)
	}
	if len(f.Points) == 0 {
		return nil, ErrNoProfile
	}
	if f.Cores < 1 {
		return nil, fmt.Errorf("fit %s: profiles record %d cores", label, f.Cores)
	}
	f.WireBytesUp, f.WireBytesDown, f.RoundTrips = stats.Median(up), stats.Median(down), stats.Median(rt)
	f.cpu = cpuCurve(f.Points)
	f.PerRoundTripS, f.Overlap = f.calibrate()
	return f, nil
}

// Measured is the machine the fit's points were measured on: the lab's one machine, or
// the server and client hosts of a --hosts run. Predictions default to it.
func (f *Fit) Measured() Machine {
	if f.ServerCores > 0 && f.ClientCores > 0 {
		return Machine{ServerCores: f.ServerCores, ClientCores: f.ClientCores}
	}
	return Machine{SharedCores: f.Cores}
}

// cpuCurve picks, per thread count, the CPU cost of the point with the most transactions
// per second. CPU per transaction grows with concurrency (lock contention, context
// switches), and the machine's CPU also holds a background that does not scale with
// transactions (samplers, mysqld's own threads, whatever else runs on the box): per
// transaction it adds background / TPS, so the fastest point is where the figure is
// closest to the transaction's own cost. On a link-bound 20 mbit point the machine's CPU
// per transaction is 2-3× the unlimited point's.
func cpuCurve(pts []result.Point) []cpuAt {
	best := map[int]result.Profile{}
	for _, p := range pts {
		pr := *p.Profile
		if b, ok := best[pr.Threads]; !ok || pr.TPS > b.TPS {
			best[pr.Threads] = pr
		}
	}
	out := make([]cpuAt, 0, len(best))
	for th, pr := range best {
		out = append(out, cpuAt{threads: th, machine: pr.CPUMachineS, server: pr.CPUServerS, client: pr.CPUClientS})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].threads < out[j].threads })
	return out
}

// cpuFor is the CPU cost at n threads: linear in log2(threads) between measured thread
// counts, held at the nearest measured one outside them.
func (f *Fit) cpuFor(n int) cpuAt {
	c := f.cpu
	if n <= c[0].threads {
		return c[0]
	}
	for i := 1; i < len(c); i++ {
		if n <= c[i].threads {
			a, b := c[i-1], c[i]
			w := math.Log2(float64(n)/float64(a.threads)) / math.Log2(float64(b.threads)/float64(a.threads))
			lerp := func(x, y float64) float64 { return x + w*(y-x) }
			return cpuAt{threads: n, machine: lerp(a.machine, b.machine), server: lerp(a.server, b.server), client: lerp(a.client, b.client)}
		}
	}
	return c[len(c)-1]
}

// calibrate finds what a transaction's latency holds beyond the CPU and the configured
// RTT. At one thread exact MVA reduces to R = Σ D_k + Z, so at a point where nothing
// queues the residual latency − CPU − round trips × RTT is either a fixed cost per round
// trip (veth hops, wake-ups, the delayer's release; > 0) or CPU that did not delay the
// transaction (< 0), returned as a share of the CPU. It uses the lowest thread count of
// each series, skips points whose link was over half busy (the lab's shaped link overlaps
// the rest there: the residual is noise), and takes the medians.
func (f *Fit) calibrate() (perRoundTrip, overlap float64) {
	low := map[string]int{}
	for _, p := range f.Points {
		if t, ok := low[p.Series]; !ok || p.Threads < t {
			low[p.Series] = p.Threads
		}
	}
	var perRT, share []float64
	for _, p := range f.Points {
		pr := p.Profile
		if p.Threads != low[p.Series] || p.LinkUtilization > 0.5 || pr.RoundTrips <= 0 {
			continue
		}
		cpu := f.cpuFor(p.Threads).machine
		resid := pr.LatAvgMs/1000 - cpu - pr.RoundTrips*pr.LinkRTTMs/1000
		perRT, share = append(perRT, resid/pr.RoundTrips), append(share, -resid/cpu)
	}
	if len(perRT) == 0 {
		return 0, 0
	}
	if c := stats.Median(perRT); c >= 0 {
		return c, 0
	}
	return 0, min(1, max(0, stats.Median(share)))
}

// Group splits points into one Fit per variant, in run order. Points without a profile
// are left out; ErrNoProfile when none has one.
func Group(pts []result.Point) ([]*Fit, error) {
	var order []string
	by := map[string][]result.Point{}
	for _, p := range pts {
		if p.Profile == nil {
			continue
		}
		k := VariantOf(p)
		if _, ok := by[k]; !ok {
			order = append(order, k)
		}
		by[k] = append(by[k], p)
	}
	var out []*Fit
	for _, k := range order {
		f, err := NewFit(k, by[k])
		if errors.Is(err, ErrNoProfile) {
			continue // every point of the variant failed
		}
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	if len(out) == 0 {
		return nil, ErrNoProfile
	}
	return out, nil
}

// VariantOf names what a point ran over the wire, whatever the link: "plain",
// "compression", "tls", or the workload, transport and channel where they are not the
// defaults (oltp_read_only over a direct TCP connection): "socket", "oltp_read_write+tls".
func VariantOf(p result.Point) string {
	var parts []string
	if p.Workload != "" && p.Workload != "oltp_read_only" {
		parts = append(parts, p.Workload)
	}
	if p.Transport != "" && p.Transport != "tcp" {
		parts = append(parts, p.Transport)
	}
	if p.Channel != "" && p.Channel != "direct" {
		parts = append(parts, p.Channel)
	}
	if p.Compression {
		parts = append(parts, "compression")
	}
	if p.TLS {
		parts = append(parts, "tls")
	}
	if len(parts) == 0 {
		parts = append(parts, "plain")
	}
	return strings.Join(parts, "+")
}

// CPURange is the lowest and highest machine CPU-seconds per transaction the fit holds
// over its thread counts.
func (f *Fit) CPURange() (lo, hi float64) {
	lo = math.Inf(1)
	for _, c := range f.cpu {
		lo, hi = min(lo, c.machine), max(hi, c.machine)
	}
	return lo, hi
}
