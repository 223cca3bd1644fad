package cli

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/model"
	"github.com/wirelab/wirelab/internal/report"
	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/stats"
)

// predictOut is `wirelab predict --json`.
type predictOut struct {
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

func predictionJSON(o predictOptions, q report.Prediction) (predictOut, error) {
	out := predictOut{From: o.from}
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

// crossOut is the compression crossover at one thread count.
type crossOut struct {
	Profile  string  `json:"profile"` // the compressed variant
	Against  string  `json:"against"` // the plain one
	Machine  string  `json:"machine"`
	RTTMs    float64 `json:"rtt_ms"`
	Threads  int     `json:"threads"`
	Pays     string  `json:"pays"`     // below | always | never
	RateBps  int64   `json:"rate_bps"` // the crossover (3 significant figures); 0 without one
	TPSLean  float64 `json:"tps_compressed"`
	TPSPlain float64 `json:"tps_plain"`
}

// predictCrossover names, per compressed profile and thread count, the link rate below
// which compression pays.
func predictCrossover(p *Process, o predictOptions, fits []*model.Fit) error {
	out := predictOut{From: o.from}
	var lines []string
	for _, lean := range fits {
		if !lean.Points[0].Compression {
			continue
		}
		q := lean.Points[0]
		q.Compression = false
		var plain *model.Fit
		for _, f := range fits {
			if f.Label == model.VariantOf(q) {
				plain = f
			}
		}
		if plain == nil {
			continue
		}
		m := machineOr(o.machine, lean)
		cs, err := model.FindCrossover(lean, plain, o.links[0], m, o.threads)
		if err != nil {
			return fmt.Errorf("predict: %w", err)
		}
		for _, c := range cs {
			co := crossOut{Profile: lean.Label, Against: plain.Label, Machine: m.String(), RTTMs: rttMs(o.links[0].RTT),
				Threads: c.Threads, Pays: c.Pays, RateBps: roundRate(c.RateBps), TPSLean: c.TPSLean, TPSPlain: c.TPSPlain}
			out.Crossover = append(out.Crossover, co)
			lines = append(lines, crossText(co))
		}
	}
	if len(out.Crossover) == 0 {
		return fmt.Errorf("predict --crossover compression: %s holds no compressed profile with a plain one beside it (series like 20mbit and 20mbit+compression: wirelab study bandwidth --experiments n2)", strings.Join(o.from, ", "))
	}
	if o.json {
		return writeJSON(p, out)
	}
	fmt.Fprintf(p.Stdout, "Where protocol compression stops paying (from %s; %s, RTT %g ms):\n", strings.Join(o.from, ", "), out.Crossover[0].Machine, out.Crossover[0].RTTMs)
	for _, l := range lines {
		fmt.Fprintln(p.Stdout, "  "+l)
	}
	return nil
}

func crossText(c crossOut) string {
	at := threadsWord(c.Threads)
	switch c.Pays {
	case "always":
		return fmt.Sprintf("%s: %s is faster than %s at every rate up to 10tbit", at, c.Profile, c.Against)
	case "never":
		return fmt.Sprintf("%s: %s is slower than %s even at 1kbit", at, c.Profile, c.Against)
	}
	return fmt.Sprintf("%s: %s pays below %s (both %.0f TPS there); above it %s is faster",
		at, c.Profile, link.FormatRate(c.RateBps), c.TPSPlain, c.Against)
}

func threadsWord(n int) string {
	if n == 1 {
		return "1 thread"
	}
	return strconv.Itoa(n) + " threads"
}

// againstOut is the model against one measured point of an --against run.
type againstOut struct {
	Run        string  `json:"run"`
	Series     string  `json:"series"`
	Profile    string  `json:"profile"`
	RateBps    int64   `json:"rate_bps"`
	RTTMs      float64 `json:"rtt_ms"`
	Threads    int     `json:"threads"`
	Measured   float64 `json:"measured_tps"`
	Predicted  float64 `json:"predicted_tps"`
	Err        float64 `json:"error"`
	Bottleneck string  `json:"model_bottleneck"`
	Measured2  string  `json:"measured_bottleneck"`
	Miss       string  `json:"miss,omitempty"` // the station whose measured figure explains the error
	ErrWith    float64 `json:"error_with_measured,omitempty"`
	Fitted     float64 `json:"fitted,omitempty"`
	Actual     float64 `json:"measured,omitempty"`
}

// predictAgainst predicts every point of the --against runs on its own (lab) link and
// prints predicted vs measured, the error and the station that explains a miss.
func predictAgainst(p *Process, o predictOptions, fits []*model.Fit) error {
	by := map[string]*model.Fit{}
	for _, f := range fits {
		by[f.Label] = f
	}
	out := predictOut{From: o.from}
	var errs []float64
	for _, dir := range o.against {
		r, err := result.Read(dir)
		if err != nil {
			return fmt.Errorf("predict --against: %w", err)
		}
		for _, pt := range r.Points {
			f := by[model.VariantOf(pt)]
			if f == nil || pt.Failed || pt.TPS <= 0 {
				continue
			}
			a, err := f.PredictAgainst(pt)
			if err != nil {
				return fmt.Errorf("predict --against %s: %w", dir, err)
			}
			out.Against = append(out.Against, againstOut{Run: dir, Series: pt.Series, Profile: f.Label, RateBps: pt.LinkRateBps,
				RTTMs: link.RTTMs(pt.LinkDelayMs), Threads: pt.Threads, Measured: pt.TPS, Predicted: a.Predicted.TPS, Err: a.Err,
				Bottleneck: a.Predicted.Bottleneck, Measured2: pt.Bottleneck, Miss: a.Miss, ErrWith: a.ErrWith, Fitted: a.Fitted, Actual: a.Measured})
			errs = append(errs, abs(a.Err))
		}
	}
	if len(out.Against) == 0 {
		return fmt.Errorf("predict --against: no point of %s matches a profile of %s", strings.Join(o.against, ", "), strings.Join(o.from, ", "))
	}
	if o.json {
		return writeJSON(p, out)
	}
	fmt.Fprintln(p.Stdout, "| link | threads | measured TPS | predicted TPS | error | model's bottleneck | measured bottleneck | station that explains the miss |")
	fmt.Fprintln(p.Stdout, "|---|---:|---:|---:|---:|---|---|---|")
	for _, a := range out.Against {
		fmt.Fprintf(p.Stdout, "| %s | %d | %.1f | %.1f | %+.1f%% | %s | %s | %s |\n", linkText(a.RateBps, a.RTTMs), a.Threads,
			a.Measured, a.Predicted, a.Err*100, a.Bottleneck, a.Measured2, missText(a))
	}
	worst := 0.0
	for _, e := range errs {
		worst = max(worst, e)
	}
	fmt.Fprintf(p.Stdout, "\n%d points: median error %.1f%%, worst %.1f%%\n", len(errs), stats.Median(errs)*100, worst*100)
	return nil
}

func linkText(rate int64, rttMs float64) string {
	s := link.FormatRate(rate)
	if rttMs > 0 {
		s += fmt.Sprintf(" rtt %gms", rttMs)
	}
	return s
}

func missText(a againstOut) string {
	if a.Miss == "" {
		return "–"
	}
	unit := func(v float64) string {
		switch a.Miss {
		case model.StationCPU, model.StationLab:
			return fmt.Sprintf("%.0f µs/txn", v*1e6)
		case model.StationRoundTrips:
			return fmt.Sprintf("%.3f ms/round trip", v*1000)
		}
		return fmt.Sprintf("%.0f B/txn", v)
	}
	return fmt.Sprintf("%s: fitted %s, measured %s (error with it %+.1f%%)", a.Miss, unit(a.Fitted), unit(a.Actual), a.ErrWith*100)
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
