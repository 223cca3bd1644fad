package model

import (
	"errors"
	"math"
	"testing"
)

// repairman is the closed form of the finite-source (machine repairman) model: N
// customers, a delay Z and one station of m servers with demand D. Birth-death balance
// gives p(k) ∝ N!/(N-k)! (D/Z)^k / Π_{i≤k} min(i, m), and X = Σ p(k) min(k, m) / D.
// Computed in logs so N in the thousands does not overflow.
func repairman(n int, m, d, z float64) float64 {
	logw := make([]float64, n+1)
	top := 0.0
	for k := 1; k <= n; k++ {
		logw[k] = logw[k-1] + math.Log(float64(n-k+1)) + math.Log(d/z) - math.Log(min(float64(k), m))
		top = max(top, logw[k])
	}
	var sum, busy float64
	for k := 0; k <= n; k++ {
		w := math.Exp(logw[k] - top)
		sum += w
		busy += w * min(float64(k), m)
	}
	return busy / sum / d
}

func TestSolveMatchesRepairmanClosedForm(t *testing.T) {
	for _, c := range []struct {
		name string
		m    float64
		d, z float64
		ns   []int
	}{
		{"one server, light", 1, 0.001, 0.05, []int{1, 2, 10, 50, 200}},
		{"one server, heavy", 1, 0.004, 0.01, []int{1, 3, 8, 64, 2048}},
		{"two cores", 2, 0.0017, 0.003, []int{1, 2, 4, 8, 32, 512}},
		{"1.7 cores (one shared)", 1.7, 0.0008, 0.0002, []int{1, 2, 3, 8, 32}},
		{"48 cores at the knee", 48, 0.02, 0.016, []int{1, 16, 48, 64, 96, 512, 2048, 4096}},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := Solve([]Station{{"think", c.z, 0, 0}, {"cpu", c.d, c.m, 0}}, c.ns)
			if err != nil {
				t.Fatal(err)
			}
			for i, n := range c.ns {
				want := repairman(n, c.m, c.d, c.z)
				if got := res[i].Throughput; math.Abs(got-want)/want > 1e-6 {
					t.Errorf("N=%d: X = %.6f, closed form %.6f", n, got, want)
				}
				if lit := float64(n) / res[i].Throughput; math.Abs(lit-res[i].Response) > 1e-9*lit {
					t.Errorf("N=%d: response %.6g breaks Little's law (N/X = %.6g)", n, res[i].Response, lit)
				}
			}
		})
	}
}

func TestSolveSingleStationNoThink(t *testing.T) {
	// One queueing station alone: always busy from N = 1, X = 1/D, R = N·D.
	res, err := Solve([]Station{{"link", 0.01, 1, 0}}, []int{1, 7, 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if math.Abs(r.Throughput-100) > 1e-9 || math.Abs(r.Response-float64(r.N)*0.01) > 1e-9 {
			t.Errorf("N=%d: X=%g R=%g, want 100 and %g", r.N, r.Throughput, r.Response, float64(r.N)*0.01)
		}
	}
}

func TestSolveRespectsThroughputBounds(t *testing.T) {
	// Asymptotic bounds (Lazowska et al. ch. 5): X(N) ≤ min(N/(D+Z), 1/Dmax), and X(N)
	// reaches 1/Dmax as N grows; here the bottleneck is the downlink.
	st := []Station{{"rtt", 0.02, 0, 0}, {"cpu-client", 0.0004, 1, 0}, {"uplink", 0.0002, 1, 0},
		{"cpu-server", 0.0009, 1, 0}, {"downlink", 0.003, 1, 0}}
	d, z, dmax := 0.0004+0.0002+0.0009+0.003, 0.02, 0.003
	ns := []int{1, 2, 4, 8, 16, 32, 64, 128, 1024}
	res, err := Solve(st, ns)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		bound := math.Min(float64(r.N)/(d+z), 1/dmax)
		if r.Throughput > bound*(1+1e-12) {
			t.Errorf("N=%d: X=%g above the bound %g", r.N, r.Throughput, bound)
		}
		if i > 0 && r.Throughput < res[i-1].Throughput {
			t.Errorf("N=%d: X fell from %g to %g", r.N, res[i-1].Throughput, r.Throughput)
		}
	}
	if first := res[0].Throughput; math.Abs(first-1/(d+z)) > 1e-9 {
		t.Errorf("N=1: X=%g, want exactly 1/(D+Z) = %g", first, 1/(d+z))
	}
	if last := res[len(res)-1]; math.Abs(last.Throughput*dmax-1) > 1e-6 || last.Util[4] < 0.999999 {
		t.Errorf("N=1024: X=%g (downlink %.4f busy), want 1/Dmax = %g", last.Throughput, last.Util[4], 1/dmax)
	}
}

func TestSolveRefusesBadNetworks(t *testing.T) {
	for _, c := range []struct {
		name string
		st   []Station
		ns   []int
	}{
		{"no demand", []Station{{"a", 0, 1, 0}}, []int{1}},
		{"negative demand", []Station{{"a", -1, 1, 0}}, []int{1}},
		{"NaN demand", []Station{{"a", math.NaN(), 1, 0}}, []int{1}},
		{"zero population", []Station{{"a", 1, 1, 0}}, []int{0}},
		{"credit above demand", []Station{{"a", 1, 1, 2}}, []int{1}},
		{"credit on a delay", []Station{{"a", 1, 0, 0.5}}, []int{1}},
		{"credit on two servers", []Station{{"a", 1, 2, 0.5}}, []int{1}},
	} {
		if _, err := Solve(c.st, c.ns); !errors.Is(err, ErrBadNetwork) {
			t.Errorf("%s: err = %v, want ErrBadNetwork", c.name, err)
		}
	}
}

// mva is Algorithm 6.1 of Lazowska et al. (exact MVA, delay and single-server stations
// only), written independently of Solve to check it on networks of several stations.
func mva(st []Station, n int) float64 {
	q := make([]float64, len(st))
	x := 0.0
	for pop := 1; pop <= n; pop++ {
		r := make([]float64, len(st))
		sum := 0.0
		for k, s := range st {
			r[k] = s.Demand
			if s.Servers == 1 {
				r[k] *= 1 + q[k]
			}
			sum += r[k]
		}
		x = float64(pop) / sum
		for k := range st {
			q[k] = x * r[k]
		}
	}
	return x
}

func TestSolveMatchesMVAOnSeveralStations(t *testing.T) {
	st := []Station{{"rtt", 0.012, 0, 0}, {"cpu-client", 0.0011, 1, 0}, {"uplink", 0.0007, 1, 0},
		{"cpu-server", 0.0016, 1, 0}, {"downlink", 0.0016, 1, 0}, {"extra-delay", 0.003, 0, 0}}
	ns := []int{1, 2, 5, 9, 17, 33, 100, 1000}
	res, err := Solve(st, ns)
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range ns {
		if want := mva(st, n); math.Abs(res[i].Throughput-want)/want > 1e-9 {
			t.Errorf("N=%d: X = %.9g, MVA %.9g", n, res[i].Throughput, want)
		}
	}
}
