package study

import (
	"context"
	"fmt"
	"strings"

	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/result"
)

// Bandwidth is the Percona 2019 study: benchmark N1 (a slow vs a fast link), N2 (protocol
// compression on each), N3 (TLS on each), oltp_read_only with pareto access.
type Bandwidth struct {
	Slow, Fast  link.Condition
	Experiments []string // subset of n1, n2, n3
	Threads     []int
	Common      Cell // workload, duration, warm-up
	Repeat      int
}

// BandwidthThreads is the study's thread ladder.
var BandwidthThreads = []int{1, 4, 16, 32, 64, 96, 128, 256, 512, 1024, 2048}

// Experiments of the bandwidth study and the variants each needs on both links.
var bandwidthVariants = map[string][]string{"n1": {"plain"}, "n2": {"plain", "compression"}, "n3": {"plain", "tls"}}

// ParseExperiments validates a comma-separated list of n1, n2, n3.
func ParseExperiments(v string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, e := range strings.Split(v, ",") {
		e = strings.ToLower(strings.TrimSpace(e))
		if _, ok := bandwidthVariants[e]; !ok {
			return nil, fmt.Errorf("--experiments %q: %q is not one; want a comma-separated subset of n1,n2,n3", v, e)
		}
		if !seen[e] {
			seen[e] = true
			out = append(out, e)
		}
	}
	return out, nil
}

// SeriesName labels a link variant by what was measured: "20mbit+compression".
func SeriesName(c link.Condition, variant string) string {
	s := link.FormatRate(c.RateBps)
	if variant != "plain" {
		s += "+" + variant
	}
	return s
}

// Cells orders the matrix by link, then variant, then repeat and threads, so the wire is
// reshaped once per link.
func (b Bandwidth) Cells() []PlannedCell {
	variants := map[string]bool{}
	for _, e := range b.Experiments {
		for _, v := range bandwidthVariants[e] {
			variants[v] = true
		}
	}
	var cells []PlannedCell
	for _, cond := range []link.Condition{b.Slow, b.Fast} {
		cond := cond
		for _, v := range []string{"plain", "compression", "tls"} {
			if !variants[v] {
				continue
			}
			for r := 1; r <= max(b.Repeat, 1); r++ {
				for _, t := range b.Threads {
					c := b.Common
					c.Study, c.Series, c.Threads, c.Repeat = "bandwidth", SeriesName(cond, v), t, r
					c.Compression, c.TLS = v == "compression", v == "tls"
					c.Transport, c.Channel, c.ClientHost = "tcp", "direct", lab.Client
					c.Host, c.Port = lab.HostAddr[lab.Server], 3306
					cells = append(cells, PlannedCell{Cell: c, Link: &cond})
				}
			}
		}
	}
	return cells
}

// Series lists the series names in matrix order.
func (b Bandwidth) Series() []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range b.Cells() {
		if !seen[c.Series] {
			seen[c.Series] = true
			out = append(out, c.Series)
		}
	}
	return out
}

// CalibrationTarget is the blog's fast/slow throughput ratio at saturation: 18529/2867.
const CalibrationTarget = 18529.4 / 2867.47

// CalibratedSlow returns the slow-link rate that makes the fast link about
// CalibrationTarget times faster, from the fast link's peak wire bytes per second (the
// busier direction): a network-bound link's throughput is proportional to its rate.
func CalibratedSlow(peakBytesPerS float64) (int64, error) {
	if peakBytesPerS <= 0 {
		return 0, fmt.Errorf("calibrate: the unshaped point moved no bytes on the wire")
	}
	bps := peakBytesPerS * 8 / CalibrationTarget
	// Round to a tc-friendly value (whole kbit) so the report shows a clean rate.
	kbit := int64(bps/1000 + 0.5)
	if kbit < 1 {
		kbit = 1
	}
	return kbit * 1000, nil
}

// CalibrationNote records the calibration choice in results.json.
func CalibrationNote(p result.Point, slowBps int64) string {
	return fmt.Sprintf("calibrated: unshaped peak %.2f MB/s down at %d threads (%.0f TPS); slow link set to %s so fast/slow ≈ %.1f (the blog's 18529/2867)",
		p.WireBytesPerSDown/1e6, p.Threads, p.TPS, link.FormatRate(slowBps), CalibrationTarget)
}

// Calibrate is a Plan.Prelude: it measures the unshaped wire at calThreads and moves every
// slow-link cell to the calibrated rate.
func (b Bandwidth) Calibrate(calThreads int) func(ctx context.Context, eng *Engine, plan *Plan) error {
	return func(ctx context.Context, eng *Engine, plan *Plan) error {
		if err := eng.Lab.Shape(ctx, link.Condition{Delay: b.Fast.Delay, Jitter: b.Fast.Jitter, LossPct: b.Fast.LossPct}, plan.Shaper, eng.Self); err != nil {
			return fmt.Errorf("calibrate: %w", err)
		}
		c := b.Common
		c.Study, c.Series, c.Threads = "bandwidth", "calibration", calThreads
		c.Transport, c.Channel, c.ClientHost = "tcp", "direct", lab.Client
		c.Host, c.Port = lab.HostAddr[lab.Server], 3306
		p, err := eng.Measure(ctx, c)
		if err != nil {
			return fmt.Errorf("calibrate: %w", err)
		}
		peak := max(p.WireBytesPerSDown, p.WireBytesPerSUp)
		slowBps, err := CalibratedSlow(peak)
		if err != nil {
			return err
		}
		old := b.Slow
		slow := old
		slow.RateBps = slowBps
		for i := range plan.Cells {
			pc := &plan.Cells[i]
			if pc.Link != nil && *pc.Link == old {
				variant := "plain"
				if pc.Compression {
					variant = "compression"
				} else if pc.TLS {
					variant = "tls"
				}
				pc.Link, pc.Series = &slow, SeriesName(slow, variant)
			}
		}
		b.Slow = slow
		plan.Spec.Series = b.Series()
		if plan.Spec.Extra == nil {
			plan.Spec.Extra = map[string]string{}
		}
		plan.Spec.Extra["slow_rate_bps"] = fmt.Sprint(slowBps)
		plan.Spec.Extra["calibration_peak_bytes_per_s"] = fmt.Sprintf("%.0f", peak)
		plan.Notes = append(plan.Notes, CalibrationNote(p, slowBps))
		return nil
	}
}
