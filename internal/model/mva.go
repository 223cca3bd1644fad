package model

import (
	"errors"
	"fmt"
	"math"
)

// Station is one service centre of a closed queueing network.
//
// A station with Servers = 0 is a delay (infinite-server) station: a customer spends
// Demand there whatever the load, as a transaction waits out its round trips. Servers ≥ 1
// is a queueing station with that many identical servers (a CPU's cores; a link is one
// server), whose service rate is min(j, Servers)/Demand with j customers present. Servers
// may be fractional (1.7: a CPU part of whose second core is taken by other work).
//
// Credit > 0 makes a one-server station a token-bucket shaper (shaper.go): of its Demand
// (the transmission time its tokens pay for) the customer waits in the queue for
// Demand − Credit only, and throughput is bounded by 1/Demand.
type Station struct {
	Name    string
	Demand  float64 // seconds of service per transaction (visits × service time)
	Servers float64
	Credit  float64 // seconds of Demand a shaper's stored tokens let through; 0 otherwise
}

// Result is the solution of the network at one population N.
type Result struct {
	N          int
	Throughput float64   // transactions per second
	Response   float64   // seconds per transaction cycle, delay included (Little: N / X)
	Util       []float64 // busy fraction of one server, X × Demand / Servers; 0 for a delay
}

// ErrBadNetwork is returned for a network that cannot be solved.
var ErrBadNetwork = errors.New("bad queueing network")

// MaxPopulation bounds N: the solution costs O(N × Σ servers) per station.
const MaxPopulation = 1 << 16

// Solve returns the exact mean throughput, response time and utilisations of a closed,
// single-class, product-form network at each population asked.
//
// Exact Mean Value Analysis (Lazowska, Zahorjan, Graham and Sevcik, Quantitative System
// Performance, 1984, ch. 6, Algorithm 6.1) gives X(n) = n / Σ_k R_k(n) with
// R_k(n) = D_k (1 + Q_k(n-1)). Its load-dependent extension for multi-server stations
// (ch. 20) needs each station's marginal probabilities P_k(j | n), and that recursion
// loses all precision above a dozen servers near saturation (P_k(0|n) is a small
// difference of large terms; a 48-core CPU at the knee gives throughputs off by 4×). So
// Solve computes the same exact figures through the normalising constant G(n), by Buzen's
// convolution (Buzen, "Computational algorithms for closed queueing networks with
// exponential servers", CACM 16(9), 1973; Lazowska et al. §20.4), in logarithms so nothing
// overflows: X(n) = G(n-1) / G(n) and U_k(n) = X(n) D_k / m_k, which is what MVA's
// recursion yields when it is stable (the tests hold it to the closed form of the machine
// repairman model and to MVA's asymptotic bounds N/(D+Z) and 1/Dmax).
//
// A station's factor is f(j) = D^j / Π_{i≤j} min(i, m): D^j for one server, D^j / j! for
// a delay (all delays add into one). The convolution with an m-server station is
// O(N × m): beyond m customers f(j) = f(j-1) × D/m, so that tail is a running sum.
//
// A shaper (Credit > 0) is not product-form: it enters the convolution with its uncovered
// demand, and X(n) is then held to its token rate Servers/Demand (shaper.go says why).
func Solve(stations []Station, populations []int) ([]Result, error) {
	maxN := 0
	for _, n := range populations {
		if n < 1 || n > MaxPopulation {
			return nil, fmt.Errorf("%w: population %d: want 1 to %d", ErrBadNetwork, n, MaxPopulation)
		}
		maxN = max(maxN, n)
	}
	delay, total, queued := 0.0, 0.0, 0.0
	for _, s := range stations {
		if err := s.validate(); err != nil {
			return nil, err
		}
		if s.Servers == 0 {
			delay += s.Demand
		}
		total += s.Demand
		queued += s.Demand - s.Credit
	}
	if total <= 0 {
		return nil, fmt.Errorf("%w: every station has zero demand", ErrBadNetwork)
	}
	logG := delayLogG(delay, maxN)
	for _, s := range stations {
		if s.Servers > 0 && s.Demand > s.Credit {
			s.Demand -= s.Credit
			logG = convolve(logG, s)
		}
	}
	res := make([]Result, len(populations))
	for i, n := range populations {
		x := math.Inf(1) // every demand covered by credit: only the token rates bound it
		if queued > 0 {
			x = math.Exp(logG[n-1] - logG[n])
		}
		for _, s := range stations {
			if s.Credit > 0 {
				x = min(x, s.Servers/s.Demand)
			}
		}
		r := Result{N: n, Throughput: x, Response: float64(n) / x, Util: make([]float64, len(stations))}
		for k, s := range stations {
			if s.Servers > 0 {
				r.Util[k] = x * s.Demand / s.Servers
			}
		}
		res[i] = r
	}
	return res, nil
}

// validate refuses a station outside sense: demands are finite and ≥ 0, servers 0 or ≥ 1,
// and a credit only on a one-server station, within its demand.
func (s Station) validate() error {
	if s.Demand < 0 || math.IsNaN(s.Demand) || math.IsInf(s.Demand, 0) || s.Servers < 0 || math.IsNaN(s.Servers) ||
		(s.Servers > 0 && s.Servers < 1) {
		return fmt.Errorf("%w: station %s: demand %g s with %g servers (want 0 or ≥ 1)", ErrBadNetwork, s.Name, s.Demand, s.Servers)
	}
	if s.Credit < 0 || math.IsNaN(s.Credit) || s.Credit > s.Demand || (s.Credit > 0 && s.Servers != 1) {
		return fmt.Errorf("%w: station %s: credit %g s of a demand %g s on %g servers (want a one-server shaper, credit ≤ demand)",
			ErrBadNetwork, s.Name, s.Credit, s.Demand, s.Servers)
	}
	return nil
}

// delayLogG is log G(n), n = 0..maxN, of the delay station alone: Z^n / n!. With no delay
// G is 1 at n = 0 and 0 beyond (log: -Inf).
func delayLogG(z float64, maxN int) []float64 {
	g := make([]float64, maxN+1)
	for n := 1; n <= maxN; n++ {
		if z == 0 {
			g[n] = math.Inf(-1)
			continue
		}
		lf, _ := math.Lgamma(float64(n + 1))
		g[n] = float64(n)*math.Log(z) - lf
	}
	return g
}

// convolve returns log of G'(n) = Σ_j f(j) G(n-j) for station s, with
// f(j) = D^j / Π_{i≤j} min(i, m). From M = ⌈m⌉ customers on every server is busy and
// f(j) = f(j-1) × D/m, so that tail is a running sum.
func convolve(logG []float64, s Station) []float64 {
	m, ld := s.Servers, math.Log(s.Demand)
	mm := int(math.Ceil(m))
	logf := make([]float64, min(mm, len(logG)-1)+1) // f(j) for j ≤ M
	for j := 1; j < len(logf); j++ {
		logf[j] = logf[j-1] + ld - math.Log(min(float64(j), m))
	}
	out := make([]float64, len(logG))
	tail := math.Inf(-1) // log Σ_{j≥M} f(j) G(n-j)
	step := ld - math.Log(m)
	for n := range logG {
		acc := math.Inf(-1)
		for j := 0; j < mm && j <= n; j++ {
			acc = logAdd(acc, logf[j]+logG[n-j])
		}
		if n >= mm {
			tail = logAdd(tail+step, logf[mm]+logG[n-mm])
			acc = logAdd(acc, tail)
		}
		out[n] = acc
	}
	return out
}

// logAdd is log(e^a + e^b) without overflow.
func logAdd(a, b float64) float64 {
	if math.IsInf(a, -1) {
		return b
	}
	if math.IsInf(b, -1) {
		return a
	}
	if a < b {
		a, b = b, a
	}
	return a + math.Log1p(math.Exp(b-a))
}
