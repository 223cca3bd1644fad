package livemetrics

import (
	"net/http"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/wirelab/wirelab/internal/stats"
)

// Labels name the point a second belongs to. A point measured again (a repeat) has the
// same labels: its counters go on from where the last one left them.
type Labels struct {
	Study, Series string
	Channel       string // how the load reaches the server: direct, tunnel, ... ("" = not said)
	Threads       int
	Link          string // the wire as shaped, "rate 20mbit, delay 5ms"
}

// Second is one second of a point: what happened in it, added to the point's counters,
// and the load driver's latest per-second figures.
type Second struct {
	// Transactions, Queries and Errors the load driver counted in the second (each
	// per-second line's rate × its interval, summed over the point's drivers).
	Transactions, Queries, Errors float64
	// Driver is the drivers' latest per-second line, merged over the client hosts; nil when
	// none came since the last Second, and the gauges keep their values.
	Driver *DriverSecond
	// Bytes on the wire each way (up: client → server) and CPU seconds by side since the
	// last Second; Machine is every CPU of the machine the sides share, or of the server's.
	WireUpBytes, WireDownBytes          float64
	CPUServerS, CPUClientS, CPUMachineS float64
	// DelayLineCPUS is the delay line's CPU, all of it (the lab's cost), since the last
	// Second; 0 without a delay line.
	DelayLineCPUS float64
}

// DriverSecond is a driver's per-second line: a latency it does not report is 0 (sysbench
// prints a 95th percentile, pgbench the mean).
type DriverSecond struct {
	TPS, LatP95Ms, LatAvgMs float64
}

// point is what the registry holds of one Labels.
type point struct {
	running                        bool
	transactions, queries, errors  float64
	wireUp, wireDown               float64
	cpuServer, cpuClient, cpuTotal float64
	delayLine                      float64
	driver                         DriverSecond
	hist                           histogram
}

// Registry holds every point's metrics of one command and serves them (Handler).
type Registry struct {
	mu     sync.Mutex
	points map[Labels]*point
	cpus   int
	reg    *prometheus.Registry
}

// New is an empty registry of a machine of cpus CPUs (what the delay line's share is of);
// it also serves this process's own CPU and memory.
func New(cpus int) *Registry {
	r := &Registry{points: map[Labels]*point{}, cpus: cpus, reg: prometheus.NewRegistry()}
	r.reg.MustRegister(newCollector(r), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return r
}

// Handler serves the registry in Prometheus's text format.
func (r *Registry) Handler() http.Handler {
	return promhttp.HandlerFor(r.reg, promhttp.HandlerOpts{})
}

func (r *Registry) point(l Labels) *point {
	p, ok := r.points[l]
	if !ok {
		p = &point{}
		r.points[l] = p
	}
	return p
}

// Second adds one second of the point l; the point is running until End.
func (r *Registry) Second(l Labels, s Second) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.point(l)
	p.running = true
	p.transactions += s.Transactions
	p.queries += s.Queries
	p.errors += s.Errors
	p.wireUp += s.WireUpBytes
	p.wireDown += s.WireDownBytes
	p.cpuServer += s.CPUServerS
	p.cpuClient += s.CPUClientS
	p.cpuTotal += s.CPUMachineS
	p.delayLine += s.DelayLineCPUS
	if s.Driver != nil {
		p.driver = *s.Driver
	}
}

// Latency adds a driver's histogram of its measured transactions to the point l's: once
// per driver, when it ends (the drivers give theirs then).
func (r *Registry) Latency(l Labels, h stats.Histogram) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.point(l).hist.add(h)
}

// End says the point l is measured: its per-second gauges are no longer served, its
// counters and histogram are.
func (r *Registry) End(l Labels) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.point(l)
	p.running, p.driver = false, DriverSecond{}
}
