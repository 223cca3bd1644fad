package replication

import (
	"fmt"
	"math"
	"sort"

	"github.com/wirelab/wirelab/internal/result"
)

// Goals of issue 7 for the tunnel against native replication at 2 mbit / 250 ms.
const (
	GoalMaxLoadRatio = 3.0 // max sustainable QPS, tunnel ÷ native (DTLE: 1.96)
	GoalWireRatio    = 0.2 // wire bytes for the same load, tunnel ÷ native (DTLE: ~1/3)
	GoalP99SlackS    = 1.0 // p99 lag at a sustainable load ≤ RTT + this
)

// usable is a point whose numbers count: measured, caught up, checksum equal.
func usable(p result.Point) bool { return !p.Failed && p.Extra["checksum_ok"] == 1 }

// Headlines are the study's headline numbers per channel and the goals' verdicts, one
// sentence each, computed from the points (they go into the notes and on stdout).
func Headlines(pts []result.Point) []string {
	var out []string
	chans := channelsOf(pts)
	bad := 0
	for _, p := range pts {
		if !usable(p) {
			bad++
		}
	}
	if bad == 0 {
		out = append(out, fmt.Sprintf("Checksums: all %d points caught up and matched the source.", len(pts)))
	} else {
		out = append(out, fmt.Sprintf("Checksums: %d of %d points FAILED (did not catch up, or CHECKSUM TABLE differed); their numbers are left out.", bad, len(pts)))
	}

	// Scenario 1: lag at the largest RTT, and the worst anywhere.
	for _, ch := range chans {
		var worst, worstRTT, atMax, atMaxP99, maxRTT float64 = 0, 0, 0, 0, -1
		n := 0
		for _, p := range pts {
			if p.Series != LagVsRTT || p.Channel != ch || !usable(p) {
				continue
			}
			n++
			rtt := p.Extra["rtt_ms"]
			if p.Extra["lag_max_s"] > worst {
				worst, worstRTT = p.Extra["lag_max_s"], rtt
			}
			if rtt > maxRTT {
				maxRTT, atMax, atMaxP99 = rtt, p.Extra["lag_max_s"], p.Extra["lag_p99_s"]
			}
		}
		if n > 0 {
			out = append(out, fmt.Sprintf("lag-vs-rtt %s: at RTT %g ms highest lag %.2f s (p99 %.2f s); worst over all RTTs %.2f s (at %g ms).",
				ch, maxRTT, atMax, atMaxP99, worst, worstRTT))
		}
	}

	// Scenario 2: highest bounded achieved QPS.
	best := map[string]result.Point{}
	for _, p := range pts {
		if p.Series != MaxLoad || !usable(p) || p.Extra["bounded"] != 1 {
			continue
		}
		if b, ok := best[p.Channel]; !ok || p.QPS > b.QPS {
			best[p.Channel] = p
		}
	}
	nat, hasNat := best[string(Native)]
	for _, ch := range chans {
		b, ok := best[ch]
		if !ok {
			continue
		}
		s := fmt.Sprintf("max-load %s: %.0f QPS sustained (binlog %.2f Mbit/s, wire %.2f Mbit/s, lag p99 %.2f s)",
			ch, b.QPS, b.Extra["binlog_mbit_s"], b.Extra["wire_mbit_s"], b.Extra["lag_p99_s"])
		if hasNat && ch != string(Native) && nat.QPS > 0 {
			s += fmt.Sprintf(", %.2f× native", b.QPS/nat.QPS)
		}
		out = append(out, s+".")
	}

	// Scenario 3: wire ÷ native at the same target load.
	ratios := wireRatios(pts)
	for _, ch := range chans {
		rs := ratios[ch]
		if len(rs) == 0 || ch == string(Native) {
			continue
		}
		lo, hi := minMax(rs)
		out = append(out, fmt.Sprintf("bandwidth %s: %.2f× to %.2f× native's wire bytes for the same load (%d loads).", ch, lo, hi, len(rs)))
	}

	// Goals.
	tun, hasTun := best[string(Tunnel)]
	if hasTun && hasNat && nat.QPS > 0 {
		r := tun.QPS / nat.QPS
		out = append(out, fmt.Sprintf("Goal max sustainable QPS tunnel ≥ %.0f× native: %.2f× — %s (DTLE: 1.96×).", GoalMaxLoadRatio, r, verdict(r >= GoalMaxLoadRatio)))
	}
	if rs := ratios[string(Tunnel)]; len(rs) > 0 {
		_, hi := minMax(rs)
		out = append(out, fmt.Sprintf("Goal wire bytes tunnel ≤ %.2f× native for the same load: worst %.2f× — %s (DTLE: ~0.33×).", GoalWireRatio, hi, verdict(hi <= GoalWireRatio)))
	}
	if hasTun {
		lim := tun.Extra["rtt_ms"]/1000 + GoalP99SlackS
		p99 := tun.Extra["lag_p99_s"]
		out = append(out, fmt.Sprintf("Goal tunnel p99 lag ≤ RTT + %.0f s at a sustainable load: %.2f s at its highest sustained load (limit %.2f s) — %s.",
			GoalP99SlackS, p99, lim, verdict(p99 <= lim)))
	}
	return out
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}

// wireRatios is, per channel, wire_mbit_s ÷ native's at each bandwidth-scenario load both
// measured.
func wireRatios(pts []result.Point) map[string][]float64 {
	native := map[float64]float64{}
	for _, p := range pts {
		if p.Series == Bandwidth && p.Channel == string(Native) && usable(p) && p.Extra["wire_mbit_s"] > 0 {
			native[p.Extra["target_qps"]] = p.Extra["wire_mbit_s"]
		}
	}
	out := map[string][]float64{}
	for _, p := range pts {
		if p.Series != Bandwidth || !usable(p) {
			continue
		}
		if n, ok := native[p.Extra["target_qps"]]; ok {
			out[p.Channel] = append(out[p.Channel], p.Extra["wire_mbit_s"]/n)
		}
	}
	return out
}

func minMax(xs []float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, x := range xs {
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	return lo, hi
}

// channelsOf is the channels present, in the canonical order.
func channelsOf(pts []result.Point) []string {
	seen := map[string]bool{}
	for _, p := range pts {
		seen[p.Channel] = true
	}
	var out []string
	for _, c := range Channels {
		if seen[string(c)] {
			out = append(out, string(c))
			delete(seen, string(c))
		}
	}
	var rest []string
	for c := range seen {
		rest = append(rest, c)
	}
	sort.Strings(rest)
	return append(out, rest...)
}
