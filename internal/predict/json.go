package predict

import (
	"fmt"

	"github.com/wirelab/wirelab/internal/model"
	"github.com/wirelab/wirelab/internal/report"
)

// Output is `wirelab predict --json`: the profiles and their predictions, or the
// crossover, or the points of an --against run.
type Output struct {
	From      []string     `json:"from"`
	Profiles  []profileOut `json:"profiles"`
	Crossover []crossOut   `json:"crossover,omitempty"`
	Against   []againstOut `json:"against,omitempty"`
}

// profileOut is one fitted variant and its predictions.
type profileOut struct {
	Profile        string     `json:"profile"`
	Series         []string   `json:"series"`
	Points         int        `json:"points"`
	WireBytesUp    float64    `json:"wire_bytes_up"`
	WireBytesDown  float64    `json:"wire_bytes_down"`
	RoundTrips     float64    `json:"round_trips"`
	PerRoundTripMs float64    `json:"per_round_trip_ms"` // calibrated fixed cost beyond the RTT
	CPUOverlap     float64    `json:"cpu_overlap"`       // share of the lab's CPU beside the path
	LabCores       int        `json:"lab_cores"`
	CheckMedianErr float64    `json:"check_median_error"` // on the profile's own points, |pred/meas − 1|
	CheckWorstErr  float64    `json:"check_worst_error"`
	Machine        string     `json:"machine"`
	Links          []linkPred `json:"links,omitempty"`
}

type linkPred struct {
	RateBps int64     `json:"rate_bps"` // 0 = unlimited
	RTTMs   float64   `json:"rtt_ms"`
	Shaped  bool      `json:"shaped"`
	Rows    []predRow `json:"rows"`
}

type predRow struct {
	Threads    int     `json:"threads"`
	TPS        float64 `json:"tps"`
	LatAvgMs   float64 `json:"lat_avg_ms"`
	Bottleneck string  `json:"bottleneck"`
	Util       float64 `json:"bottleneck_util"`
}

func profileJSON(f *model.Fit, m model.Machine) (profileOut, error) {
	cs, err := f.Check()
	if err != nil {
		return profileOut{}, fmt.Errorf("predict: %w", err)
	}
	med, worst := model.ErrorSummary(cs)
	return profileOut{Profile: f.Label, Series: f.Series, Points: len(f.Points), WireBytesUp: f.WireBytesUp,
		WireBytesDown: f.WireBytesDown, RoundTrips: f.RoundTrips, PerRoundTripMs: f.PerRoundTripS * 1000,
		CPUOverlap: f.Overlap, LabCores: f.Cores, CheckMedianErr: med, CheckWorstErr: worst, Machine: m.String()}, nil
}

func machineOr(m model.Machine, f *model.Fit) model.Machine {
	if m == (model.Machine{}) {
		return f.Measured()
	}
	return m
}

func predictionJSON(o Options, q report.Prediction) (Output, error) {
	out := Output{From: o.From}
	for _, f := range q.Fits {
		m := machineOr(q.Machine, f)
		po, err := profileJSON(f, m)
		if err != nil {
			return out, err
		}
		for _, l := range q.Links {
			ps, err := f.Predict(l, m, q.Threads)
			if err != nil {
				return out, fmt.Errorf("predict: %w", err)
			}
			lp := linkPred{RateBps: l.RateBps, RTTMs: rttMs(l.RTT), Shaped: l.Shaped}
			for _, p := range ps {
				lp.Rows = append(lp.Rows, predRow{p.Threads, p.TPS, p.LatAvgMs, p.Bottleneck, p.Util})
			}
			po.Links = append(po.Links, lp)
		}
		out.Profiles = append(out.Profiles, po)
	}
	return out, nil
}
