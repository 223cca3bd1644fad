package replication

import (
	"fmt"
	"github.com/wirelab/wirelab/internal/stats"
	"math"
	"time"
)

// LagSample is one reading of the heartbeat on the replica: At is when it was read,
// since the point started; Lag is that instant minus the heartbeat's write time.
type LagSample struct {
	At  time.Duration
	Lag time.Duration
}

// Rule decides whether lag stayed bounded over a point. It looks only at the second half
// of the load window, where a backlog that keeps growing shows as a positive trend:
//
//	bounded = slope(lag over the last half) < MaxSlope  AND  p99(lag over the last half) < RTT + Slack
//
// slope is the least-squares fit of lag (s) against time (s). A replica that keeps up has
// lag around RTT/2 plus apply time and a flat trend; one that does not gains (excess load ÷
// capacity) seconds of lag per second, so MaxSlope 0.05 calls anything more than ~5% over
// capacity unbounded. The p99 bound catches a link run at saturation, where lag wanders
// seconds above the RTT without a clear trend over a short point: that is not a load the
// channel sustains. (The p99 of the last half, not its last reading, so one lucky dip at
// the end does not decide.)
type Rule struct {
	MaxSlope float64       // s/s
	Slack    time.Duration // allowed final lag above the RTT
}

// DefaultRule is the rule the study states in its notes.
var DefaultRule = Rule{MaxSlope: 0.05, Slack: 2 * time.Second}

// String states the rule for results notes and the report.
func (r Rule) String() string {
	return fmt.Sprintf("lag is bounded when, over the last half of the load window, the least-squares slope of lag "+
		"against time is below %.2f s/s and the 99th percentile of lag is below RTT + %s",
		r.MaxSlope, r.Slack)
}

// LagStats summarises the lag of one point's load window.
type LagStats struct {
	N        int     // samples in the window
	MaxS     float64 // highest lag
	P99S     float64 // 99th percentile (nearest rank)
	MeanS    float64
	SlopeSS  float64 // s/s over the last half
	HalfP99S float64 // p99 over the last half
	FinalS   float64 // mean over the last second
	Bounded  bool
	Why      string // why not bounded ("" when bounded)
	Complete bool   // false when the window had too few samples to judge
}

// Analyze applies rule to the samples that fall inside [0, window].
func Analyze(samples []LagSample, window, rtt time.Duration, rule Rule) LagStats {
	var in []LagSample
	for _, s := range samples {
		if s.At >= 0 && s.At <= window {
			in = append(in, s)
		}
	}
	st := LagStats{N: len(in)}
	if len(in) == 0 {
		st.Why = "no lag samples"
		return st
	}
	lags := make([]float64, len(in))
	for i, s := range in {
		lags[i] = s.Lag.Seconds()
		st.MaxS = math.Max(st.MaxS, lags[i])
		st.MeanS += lags[i]
	}
	st.MeanS /= float64(len(lags))
	st.P99S = stats.Percentile(lags, 99)

	var xs, ys, last []float64
	for _, s := range in {
		if s.At >= window/2 {
			xs, ys = append(xs, s.At.Seconds()), append(ys, s.Lag.Seconds())
		}
		if s.At >= window-time.Second {
			last = append(last, s.Lag.Seconds())
		}
	}
	if len(xs) < 5 || len(last) == 0 {
		st.Why = fmt.Sprintf("too few lag samples in the last half (%d)", len(xs))
		return st
	}
	st.Complete = true
	st.SlopeSS = Slope(xs, ys)
	st.HalfP99S = stats.Percentile(ys, 99)
	for _, v := range last {
		st.FinalS += v
	}
	st.FinalS /= float64(len(last))
	limit := (rtt + rule.Slack).Seconds()
	switch {
	case st.SlopeSS >= rule.MaxSlope:
		st.Why = fmt.Sprintf("lag grows %.3f s/s over the last half (limit %.2f)", st.SlopeSS, rule.MaxSlope)
	case st.HalfP99S >= limit:
		st.Why = fmt.Sprintf("p99 lag over the last half %.2f s ≥ RTT + %s = %.2f s", st.HalfP99S, rule.Slack, limit)
	default:
		st.Bounded = true
	}
	return st
}

// Slope is the least-squares slope of ys against xs; 0 when xs do not vary.
func Slope(xs, ys []float64) float64 {
	n := float64(len(xs))
	if len(xs) < 2 || len(xs) != len(ys) {
		return 0
	}
	var sx, sy, sxx, sxy float64
	for i := range xs {
		sx += xs[i]
		sy += ys[i]
		sxx += xs[i] * xs[i]
		sxy += xs[i] * ys[i]
	}
	d := n*sxx - sx*sx
	if d == 0 {
		return 0
	}
	return (n*sxy - sx*sy) / d
}

// PerSecond buckets samples into whole seconds: out[i] is the highest lag read during
// second i+1 (the report's per-second lag), or -1 when that second had no sample.
func PerSecond(samples []LagSample, seconds int) []float64 {
	out := make([]float64, seconds)
	for i := range out {
		out[i] = -1
	}
	for _, s := range samples {
		if s.At < 0 {
			continue
		}
		i := int(s.At / time.Second)
		if i >= seconds {
			continue
		}
		out[i] = math.Max(out[i], s.Lag.Seconds())
	}
	return out
}

// Mbps turns bytes over a duration into megabits per second.
func Mbps(bytes int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(bytes) * 8 / 1e6 / d.Seconds()
}
