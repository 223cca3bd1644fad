package model

import (
	"fmt"
	"math"
)

// Crossover is where a variant with fewer bytes but more CPU per transaction (protocol
// compression) stops paying as the link gets faster.
type Crossover struct {
	Threads int
	// RateBps is the link rate at which both variants' predicted TPS are equal; below it
	// the leaner variant is faster. 0 when Pays is "always" or "never".
	RateBps float64
	// Pays is "below" (a crossover was found), "always" (faster at every rate up to
	// 10 tbit) or "never" (slower even at 1 kbit).
	Pays string
	// TPS of both variants at the crossover (or at 1 gbit when there is none).
	TPSLean, TPSPlain float64
}

// Rates searched for a crossover, in bits per second.
const (
	crossLo = 1e3
	crossHi = 1e13
)

// FindCrossover finds, at each thread count, the link rate at which lean (e.g. the
// compressed profile) and plain predict the same TPS on machine m with round-trip rtt
// (base.RTT; base.RateBps is ignored). It bisects on log(rate): the lean variant's
// advantage falls as the link speeds up, since its saving is link time and its cost CPU.
func FindCrossover(lean, plain *Fit, base Link, m Machine, threads []int) ([]Crossover, error) {
	out := make([]Crossover, 0, len(threads))
	for _, n := range threads {
		tps := func(f *Fit, rate float64) (float64, error) {
			l := base
			l.RateBps = int64(math.Round(rate))
			p, err := f.Predict(l, m, []int{n})
			if err != nil {
				return 0, fmt.Errorf("crossover at %d threads: %w", n, err)
			}
			return p[0].TPS, nil
		}
		diff := func(rate float64) (float64, float64, float64, error) {
			a, err := tps(lean, rate)
			if err != nil {
				return 0, 0, 0, err
			}
			b, err := tps(plain, rate)
			return a - b, a, b, err
		}
		c := Crossover{Threads: n}
		dlo, _, _, err := diff(crossLo)
		if err != nil {
			return nil, err
		}
		dhi, _, _, err := diff(crossHi)
		if err != nil {
			return nil, err
		}
		switch {
		case dlo <= 0:
			c.Pays = "never"
		case dhi >= 0:
			c.Pays = "always"
		default:
			lo, hi := math.Log(crossLo), math.Log(crossHi)
			for i := 0; i < 60; i++ { // 60 halvings of a 23-nat interval: far below 0.1%
				mid := (lo + hi) / 2
				d, _, _, err := diff(math.Exp(mid))
				if err != nil {
					return nil, err
				}
				if d > 0 {
					lo = mid
				} else {
					hi = mid
				}
			}
			c.Pays, c.RateBps = "below", math.Exp((lo+hi)/2)
		}
		at := c.RateBps
		if at == 0 {
			at = 1e9
		}
		if _, c.TPSLean, c.TPSPlain, err = diff(at); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}
