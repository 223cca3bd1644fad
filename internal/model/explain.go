package model

import (
	"math"

	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/result"
)

// Against is the model's prediction of a measured point it was not fitted on, on the
// point's own link (the lab's: shaped) and the lab's machine, and which station explains
// the miss.
type Against struct {
	Point     result.Point
	Predicted Prediction
	Err       float64 // predicted / measured TPS − 1
	// Miss names the station whose fitted figure, replaced by the one measured at this
	// point, brings the prediction closest to the measurement ("" when no replacement
	// halves the error); ErrWith is the error with it replaced, Fitted and Measured the
	// two figures (CPU and the lab's delay line: seconds per transaction; link: bytes per
	// transaction; latency: seconds per round trip).
	Miss             string
	ErrWith          float64
	Fitted, Measured float64
}

// MissThreshold is the error from which PredictAgainst looks for the station to blame;
// below it the points' own noise (5 s points move bytes per transaction by ±5%) dominates.
const MissThreshold = 0.05

// PredictAgainst predicts p as the lab measured it and explains the difference.
func (f *Fit) PredictAgainst(p result.Point) (Against, error) {
	a := Against{Point: p}
	l := Link{RateBps: p.LinkRateBps, RTT: msDuration(link.RTTMs(p.LinkDelayMs)), Shaped: true}
	m := f.Measured()
	pred, err := f.Predict(l, m, []int{p.Threads})
	if err != nil || p.TPS <= 0 {
		return a, err
	}
	a.Predicted, a.Err = pred[0], pred[0].TPS/p.TPS-1
	pr := p.Profile
	if pr == nil || math.Abs(a.Err) < MissThreshold {
		return a, nil
	}
	type swap struct {
		station          string
		fit              Fit
		link             Link
		fitted, measured float64
	}
	c := f.cpuFor(p.Threads)
	cpu, bytes := *f, *f
	cpu.cpu = []cpuAt{{threads: p.Threads, machine: pr.CPUMachineS, server: pr.CPUServerS, client: pr.CPUClientS}}
	bytes.WireBytesUp, bytes.WireBytesDown = pr.WireBytesUp, pr.WireBytesDown
	swaps := []swap{
		{StationCPU, cpu, l, c.machine, pr.CPUMachineS},
		{"link bytes", bytes, l, f.WireBytesUp + f.WireBytesDown, pr.WireBytesUp + pr.WireBytesDown},
	}
	if pr.LabCPUS > 0 {
		// The delay line's CPU is left out of every profile (a real network does not run
		// it), yet it took the lab's cores at this point: the fit's CPU plus it.
		lab := *f
		lab.cpu = []cpuAt{{threads: p.Threads, machine: c.machine + pr.LabCPUS, server: c.server, client: c.client}}
		swaps = append(swaps, swap{StationLab, lab, l, 0, pr.LabCPUS})
	}
	if w := p.WireCheck; w != nil && w.RTTMedianMs > 0 {
		rl := l
		rl.RTT = msDuration(w.RTTMedianMs)
		swaps = append(swaps, swap{StationRoundTrips, *f, rl, l.RTT.Seconds() + f.PerRoundTripS, rl.RTT.Seconds() + f.PerRoundTripS})
	}
	for _, s := range swaps {
		q, err := s.fit.Predict(s.link, m, []int{p.Threads})
		if err != nil {
			return a, err
		}
		e := q[0].TPS/p.TPS - 1
		if math.Abs(e) < math.Abs(a.Err)/2 && (a.Miss == "" || math.Abs(e) < math.Abs(a.ErrWith)) {
			a.Miss, a.ErrWith, a.Fitted, a.Measured = s.station, e, s.fitted, s.measured
		}
	}
	return a, nil
}
