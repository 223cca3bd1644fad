package model

import (
	"fmt"
	"math"
	"time"

	"github.com/wirelab/wirelab/internal/stats"
)

// Link is the wire to predict for: a rate per direction (0 = unlimited: no link station)
// and the round-trip time the network adds.
//
// Shaped says the rate is a token-bucket shaper's, as in the lab (HTB with the burst
// link.HTBBurst sizes), not a physical link's. A physical link serialises every byte, so
// its transmission time adds to each transaction: a queueing station. A token bucket
// refills while the transaction is elsewhere and then lets bytes out at line speed, so
// the lab fills a 20 mbit link with one thread (59.6 TPS measured, 59.6 = rate / bytes):
// shaper.go models it.
type Link struct {
	RateBps int64
	RTT     time.Duration
	Shaped  bool
}

// transmit is the seconds a link is busy sending bytes: frame bytes × 8 / rate. The
// profile's bytes are Ethernet frames, as HTB counts them.
func (l Link) transmit(bytes float64) float64 {
	if l.RateBps <= 0 {
		return 0
	}
	return bytes * 8 / float64(l.RateBps)
}

// Machine is where client and server run. SharedCores > 0 is the lab's shape: one box
// whose cores serve sysbench, mysqld and the kernel's forwarding alike. Otherwise client
// and server are separate hosts with their own cores.
type Machine struct {
	SharedCores              int
	ServerCores, ClientCores int
}

// MaxCores bounds the cores of a machine the model accepts.
const MaxCores = 1024

// Validate refuses a machine outside sense.
func (m Machine) Validate() error {
	for _, c := range []struct {
		flag string
		n    int
	}{{"cores", m.SharedCores}, {"server-cores", m.ServerCores}, {"client-cores", m.ClientCores}} {
		if c.n < 0 || c.n > MaxCores {
			return fmt.Errorf("--%s %d: want a whole number of cores from 1 to %d", c.flag, c.n, MaxCores)
		}
	}
	if m.SharedCores == 0 && (m.ServerCores == 0 || m.ClientCores == 0) {
		return fmt.Errorf("machine: give shared cores or both server and client cores")
	}
	return nil
}

func (m Machine) String() string {
	if m.SharedCores > 0 {
		return fmt.Sprintf("one machine of %d cores shared by client and server (the lab's shape)", m.SharedCores)
	}
	return fmt.Sprintf("server %d cores, client %d cores, separate hosts", m.ServerCores, m.ClientCores)
}

// Station names, as predictions report the bottleneck.
const (
	StationRoundTrips = "latency" // the delay station: round trips × (RTT + fixed cost)
	StationCPU        = "cpu"     // the lab's shared CPU
	StationServerCPU  = "server-cpu"
	StationClientCPU  = "client-cpu"
	StationUplink     = "uplink"   // client → server
	StationDownlink   = "downlink" // server → client
	// StationLab is the lab's own delay line, whose CPU no profile holds (a real network
	// does not run it): named only when its measured cost explains a missed prediction.
	StationLab = "lab"
)

// Saturated is the utilisation from which a station is named the bottleneck; below it on
// every station, throughput is set by the round trips ("latency").
const Saturated = 0.8

// Stations maps the fit onto a closed network for n threads on link l and machine m.
//
// Each transaction visits the client CPU, the uplink, the server CPU and the downlink, and
// waits its round trips × (RTT + PerRoundTripS) in a delay station; a shaped link's
// stations carry the credit its bucket refills between round trips (shaper.go). In the
// lab's shape the CPU is one station of SharedCores servers with the machine's whole CPU per
// transaction (processes plus the kernel's forwarding and softirq). For separate hosts
// the processes' CPU goes to their side and the kernel's part (machine − server − client)
// is split evenly: each host's stack sends and receives every packet once. The lab's
// kernel part also holds the wire host's forwarding, which a real network does in its
// switches, so the split is on the conservative side; so is leaving Overlap out there.
func (f *Fit) Stations(l Link, m Machine, n int) []Station {
	c := f.cpuFor(n)
	st := []Station{{StationRoundTrips, f.RoundTrips * (l.RTT.Seconds() + f.PerRoundTripS), 0, 0}}
	if m.SharedCores > 0 {
		// Work beside the transaction's path takes that share of every core: the path's
		// demand and the cores it queues for shrink alike, so capacity stays cores / CPU.
		keep := 1 - min(f.Overlap, 1-1/float64(m.SharedCores))
		st = append(st, Station{StationCPU, c.machine * keep, float64(m.SharedCores) * keep, 0})
	} else {
		kernel := max(0, c.machine-c.server-c.client)
		st = append(st, Station{StationClientCPU, c.client + kernel/2, float64(m.ClientCores), 0},
			Station{StationServerCPU, c.server + kernel/2, float64(m.ServerCores), 0})
	}
	if l.RateBps > 0 {
		b := l.Burst()
		st = append(st,
			Station{StationUplink, l.transmit(f.WireBytesUp), 1, shaperCredit(f.WireBytesUp, f.RoundTrips, b, l.RateBps)},
			Station{StationDownlink, l.transmit(f.WireBytesDown), 1, shaperCredit(f.WireBytesDown, f.RoundTrips, b, l.RateBps)})
	}
	return st
}

// Prediction is the model's answer for one thread count.
type Prediction struct {
	Threads    int
	TPS        float64
	LatAvgMs   float64 // mean transaction latency (Little's law: threads / TPS)
	Bottleneck string  // the busiest station when ≥ Saturated, else "latency"
	Util       float64 // that station's utilisation
}

// Predict solves the network at each thread count. The CPU demand depends on the thread
// count (cpuFor), so each count is its own network.
func (f *Fit) Predict(l Link, m Machine, threads []int) ([]Prediction, error) {
	out := make([]Prediction, 0, len(threads))
	for _, n := range threads {
		st := f.Stations(l, m, n)
		res, err := Solve(st, []int{n})
		if err != nil {
			return nil, fmt.Errorf("predict %s at %d threads: %w", f.Label, n, err)
		}
		r := res[0]
		p := Prediction{Threads: n, TPS: r.Throughput, LatAvgMs: r.Response * 1000, Bottleneck: StationRoundTrips}
		for k, s := range st {
			if u := r.Util[k]; u > p.Util {
				p.Util = u
				if u >= Saturated-1e-9 {
					p.Bottleneck = s.Name
				}
			}
		}
		out = append(out, p)
	}
	return out, nil
}

// CheckPoint is the model against one of its own measured points.
type CheckPoint struct {
	Series      string
	Threads     int
	RateBps     int64
	RTTMs       float64
	Measured    float64 // TPS
	Predicted   float64 // TPS
	Err         float64 // predicted / measured − 1
	Bottleneck  string  // the model's
	Measurement string  // the lab's verdict at the point
}

// Check predicts every point the fit came from, on its own link and the lab's machine.
func (f *Fit) Check() ([]CheckPoint, error) {
	var out []CheckPoint
	for _, p := range f.Points {
		pr := p.Profile
		l := Link{RateBps: pr.LinkRateBps, RTT: msDuration(pr.LinkRTTMs), Shaped: true}
		pred, err := f.Predict(l, f.Measured(), []int{p.Threads})
		if err != nil {
			return nil, err
		}
		out = append(out, CheckPoint{Series: p.Series, Threads: p.Threads, RateBps: pr.LinkRateBps, RTTMs: pr.LinkRTTMs,
			Measured: p.TPS, Predicted: pred[0].TPS, Err: pred[0].TPS/p.TPS - 1,
			Bottleneck: pred[0].Bottleneck, Measurement: p.Bottleneck})
	}
	return out, nil
}

// ErrorSummary is the median and the worst absolute relative error of checks.
func ErrorSummary(cs []CheckPoint) (median, worst float64) {
	abs := make([]float64, len(cs))
	for i, c := range cs {
		abs[i] = math.Abs(c.Err)
		worst = max(worst, abs[i])
	}
	return stats.Median(abs), worst
}

func msDuration(ms float64) time.Duration {
	return time.Duration(math.Round(ms * float64(time.Millisecond)))
}
