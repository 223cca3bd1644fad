package study

import (
	"context"
	"fmt"
	"strings"

	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/result"
)

// BandwidthOptions is the Percona 2019 study: benchmark N1 (a slow vs a fast link), N2
// (protocol compression on each), N3 (TLS on each), oltp_read_only with pareto access.
type BandwidthOptions struct {
	Bench       Bench
	Slow, Fast  link.Condition
	Experiments []string // subset of n1, n2, n3
	// CalibrateThreads > 0 measures the unshaped wire at that many threads first and sets
	// the slow rate from it (see CalibratedSlow).
	CalibrateThreads int
	// Tunnel is the N2 channel on an engine without protocol compression (PostgreSQL):
	// the compressed series goes through wirelab's tunnel instead.
	Tunnel lab.TunnelOptions
}

// Bandwidth is the bandwidth study.
type Bandwidth struct {
	o BandwidthOptions
	matrix
}

// NewBandwidth builds the study's matrix.
func NewBandwidth(o BandwidthOptions) *Bandwidth {
	b := &Bandwidth{o: o, matrix: o.Bench.matrix()}
	b.cells = o.cells()
	return b
}

// Name is "bandwidth".
func (b *Bandwidth) Name() string { return "bandwidth" }

// Needs is a client and a server, starting on the slow link, checked after every change.
func (b *Bandwidth) Needs() Needs {
	spec := b.o.Bench.spec(b.o.series(), b.o.Slow)
	spec.Extra = map[string]string{"slow": link.FormatRate(b.o.Slow.RateBps), "fast": link.FormatRate(b.o.Fast.RateBps),
		"experiments": strings.Join(b.o.Experiments, ",")}
	var notes []string
	if b.o.tunnelsN2() {
		spec.Extra["tunnel"] = b.o.Tunnel.EntryArgs()
		notes = append(notes, fmt.Sprintf("N2 on %s: protocol compression is not available (the protocol has none); "+
			"the N2 series go through wirelab's tunnel instead (entry in the client host, exit in the server host, --compress %s).",
			b.o.Bench.kind().Title(), b.o.Tunnel.Compress))
	}
	n := b.o.Bench.needs(b.o.Slow, true, spec, notes)
	n.Tunnel = b.o.tunnelsN2()
	n.ClientThreads = b.o.Bench.Threads
	if b.o.CalibrateThreads > 0 {
		n.ClientThreads = append([]int{b.o.CalibrateThreads}, n.ClientThreads...)
	}
	return n
}

// Setup calibrates the slow link when asked, then starts the tunnel the N2 series of an
// engine without protocol compression go through (after calibration, which rebuilds
// the cells).
func (b *Bandwidth) Setup(ctx context.Context, e *Env) error {
	if b.o.CalibrateThreads > 0 {
		if err := b.calibrate(ctx, e); err != nil {
			return err
		}
	}
	if !b.o.tunnelsN2() {
		return nil
	}
	return startTunnel(ctx, e, b.o.Tunnel, b.cells)
}

// tunnelsN2 says whether N2 is measured through the tunnel: asked for, on an engine
// whose protocol cannot compress.
func (b BandwidthOptions) tunnelsN2() bool {
	for _, e := range b.Experiments {
		if e == "n2" {
			return !b.Bench.kind().HasCompression()
		}
	}
	return false
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

// cells orders the matrix by link, then variant, then repeat and threads, so the wire is
// reshaped once per link.
func (b BandwidthOptions) cells() []LoadCell {
	variants := map[string]bool{}
	for _, e := range b.Experiments {
		for _, v := range bandwidthVariants[e] {
			variants[v] = true
		}
	}
	var cells []LoadCell
	for _, cond := range []link.Condition{b.Slow, b.Fast} {
		cond := cond
		for _, v := range []string{"plain", "compression", "tls"} {
			if !variants[v] {
				continue
			}
			tunnel := v == "compression" && !b.Bench.kind().HasCompression()
			if tunnel {
				v = "tunnel"
			}
			b.Bench.repeats(func(r, t int) {
				c := b.Bench.tcpCell(b.Bench.cell("bandwidth", SeriesName(cond, v), t, r))
				c.Compression, c.TLS, c.Link = v == "compression", v == "tls", &cond
				if tunnel {
					c.Channel = ChannelTunnel
				}
				cells = append(cells, c)
			})
		}
	}
	return cells
}

// series lists the series names in matrix order.
func (b BandwidthOptions) series() []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range b.cells() {
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

// calibrate measures the unshaped wire at CalibrateThreads and moves every slow-link cell
// to the calibrated rate.
func (b *Bandwidth) calibrate(ctx context.Context, e *Env) error {
	fast := b.o.Fast
	if err := e.Shape(ctx, link.Condition{Delay: fast.Delay, Jitter: fast.Jitter, LossPct: fast.LossPct}); err != nil {
		return fmt.Errorf("calibrate: %w", err)
	}
	c := b.o.Bench.tcpCell(b.o.Bench.cell("bandwidth", "calibration", b.o.CalibrateThreads, 1))
	p, err := b.Measure(ctx, e, c)
	if err != nil {
		return fmt.Errorf("calibrate: %w", err)
	}
	peak := max(p.WireBytesPerSDown, p.WireBytesPerSUp)
	slowBps, err := CalibratedSlow(peak)
	if err != nil {
		return err
	}
	b.o.Slow.RateBps = slowBps
	b.cells = b.o.cells()
	spec := &e.Run.Spec
	spec.Series, spec.LinkRateBps = b.o.series(), slowBps
	spec.Extra["slow"] = link.FormatRate(slowBps)
	spec.Extra["slow_rate_bps"] = fmt.Sprint(slowBps)
	spec.Extra["calibration_peak_bytes_per_s"] = fmt.Sprintf("%.0f", peak)
	e.Note("%s", CalibrationNote(p, slowBps))
	return nil
}
