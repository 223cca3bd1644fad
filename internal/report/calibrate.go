package report

import (
	"fmt"
	"strings"

	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/stats"
)

// calibrateSection draws `wirelab calibrate`'s runs: each link setting's TPS round by
// round, and the run-to-run spread and margin they give (result.MeasureCalibration).
type calibrateSection struct{}

func (calibrateSection) Study() string { return result.CalibrateStudy }

// notOnOtherLinks: the calibration measures the runs' spread, not the workload; no
// prediction for other links is drawn from it.
func (calibrateSection) notOnOtherLinks() {}

func (calibrateSection) Build(r *result.Run, pts []result.Point) ([]Block, error) {
	bs := []Block{Heading{2, "Calibration: this machine's run-to-run spread"}, Paragraph{
		"The same point measured round after round on two link settings, alternating, in one lab: every run follows a " +
			"re-shape of the wire. The spread of log TPS between a setting's runs, pooled over both settings, is what " +
			"two runs of one point differ by; reports judge \"no measurable difference\" within the margin it gives."}}
	cal, err := result.MeasureCalibration(pts)
	t := Table{Caption: "TPS of each run", Header: []string{"link", "runs (TPS, in order)", "mean", "spread (sd of log TPS)"},
		Numeric: []bool{false, false, true, true}}
	for _, s := range cal.Settings {
		each := make([]string, len(s.TPS))
		for i, x := range s.TPS {
			each[i] = num(x)
		}
		spread := "–"
		if s.SDLog > 0 {
			spread = fmt.Sprintf("%.2f%%", 100*s.SDLog)
		}
		t.Rows = append(t.Rows, []string{s.Series, strings.Join(each, ", "), num(stats.Mean(s.TPS)), spread})
	}
	bs = append(bs, t)
	if err != nil {
		return append(bs, Callout{"warning", "No margin: " + err.Error()}), nil
	}
	return append(bs, Paragraph{cal.Text()}), nil
}
