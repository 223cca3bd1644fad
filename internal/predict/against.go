package predict

import (
	"fmt"
	"io"
	"strings"

	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/model"
	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/stats"
)

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

// against predicts every point of the --against runs on its own (lab) link and
// prints predicted vs measured, the error and the station that explains a miss.
func against(w io.Writer, o Options, fits []*model.Fit) error {
	by := map[string]*model.Fit{}
	for _, f := range fits {
		by[f.Label] = f
	}
	out := Output{From: o.From}
	var errs []float64
	for _, dir := range o.Against {
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
		return fmt.Errorf("predict --against: no point of %s matches a profile of %s", strings.Join(o.Against, ", "), strings.Join(o.From, ", "))
	}
	if o.JSON {
		return writeJSON(w, out)
	}
	fmt.Fprintln(w, "| link | threads | measured TPS | predicted TPS | error | model's bottleneck | measured bottleneck | station that explains the miss |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---|---|---|")
	for _, a := range out.Against {
		fmt.Fprintf(w, "| %s | %d | %.1f | %.1f | %+.1f%% | %s | %s | %s |\n", linkText(a.RateBps, a.RTTMs), a.Threads,
			a.Measured, a.Predicted, a.Err*100, a.Bottleneck, a.Measured2, missText(a))
	}
	worst := 0.0
	for _, e := range errs {
		worst = max(worst, e)
	}
	fmt.Fprintf(w, "\n%d points: median error %.1f%%, worst %.1f%%\n", len(errs), stats.Median(errs)*100, worst*100)
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
