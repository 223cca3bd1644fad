package predict

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/model"
)

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

// crossover names, per compressed profile and thread count, the link rate below
// which compression pays.
func crossover(w io.Writer, o Options, fits []*model.Fit) error {
	out := Output{From: o.From}
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
		m := machineOr(o.Machine, lean)
		cs, err := model.FindCrossover(lean, plain, o.Links[0], m, o.Threads)
		if err != nil {
			return fmt.Errorf("predict: %w", err)
		}
		for _, c := range cs {
			co := crossOut{Profile: lean.Label, Against: plain.Label, Machine: m.String(), RTTMs: rttMs(o.Links[0].RTT),
				Threads: c.Threads, Pays: c.Pays, RateBps: roundRate(c.RateBps), TPSLean: c.TPSLean, TPSPlain: c.TPSPlain}
			out.Crossover = append(out.Crossover, co)
			lines = append(lines, crossText(co))
		}
	}
	if len(out.Crossover) == 0 {
		return fmt.Errorf("predict --crossover compression: %s holds no compressed profile with a plain one beside it (series like 20mbit and 20mbit+compression: wirelab study bandwidth --experiments n2)", strings.Join(o.From, ", "))
	}
	if o.JSON {
		return writeJSON(w, out)
	}
	fmt.Fprintf(w, "Where protocol compression stops paying (from %s; %s, RTT %g ms):\n", strings.Join(o.From, ", "), out.Crossover[0].Machine, out.Crossover[0].RTTMs)
	for _, l := range lines {
		fmt.Fprintln(w, "  "+l)
	}
	return nil
}

func crossText(c crossOut) string {
	at := threadsN(c.Threads)
	switch c.Pays {
	case "always":
		return fmt.Sprintf("%s: %s is faster than %s at every rate up to 10tbit", at, c.Profile, c.Against)
	case "never":
		return fmt.Sprintf("%s: %s is slower than %s even at 1kbit", at, c.Profile, c.Against)
	}
	return fmt.Sprintf("%s: %s pays below %s (both %.0f TPS there); above it %s is faster",
		at, c.Profile, link.FormatRate(c.RateBps), c.TPSPlain, c.Against)
}

// roundRate keeps three significant figures of a rate, as a person would quote it.
func roundRate(bps float64) int64 {
	if bps <= 0 {
		return 0
	}
	e := math.Pow(10, math.Floor(math.Log10(bps))-2)
	return int64(math.Round(bps/e) * e)
}
