package replication

import (
	"fmt"
	"strings"

	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/stats"
)

// Headlines are the study's headline numbers per channel and the goals' verdicts, one
// sentence each, computed from the points (they go into the notes and on stdout), in the
// engine's terms; ratios are read within margin m.
func Headlines(t Terms, pts []result.Point, m stats.Margin) []string {
	var out []string
	bad := 0
	for _, p := range pts {
		if !p.Usable() {
			bad++
		}
	}
	if bad == 0 {
		out = append(out, fmt.Sprintf("Checksums: all %d points caught up and matched the source.", len(pts)))
	} else {
		out = append(out, fmt.Sprintf("Checksums: %d of %d points FAILED (did not catch up, or the %s differed); their numbers are left out.", bad, len(pts), t.Checksum))
	}
	chans := channelsOf(pts)
	out = append(out, lagHeadlines(pts, chans)...)

	// Scenario 2: the search's limits, one computation shared with the report.
	edges := map[string]result.Edge{}
	for _, e := range result.MaxLoads(pts) {
		if e.Limit <= 0 {
			continue
		}
		edges[e.Channel] = e
	}
	nat, hasNat := edges[string(Native)]
	for _, ch := range chans {
		e, ok := edges[ch]
		if !ok {
			continue
		}
		s := fmt.Sprintf("max-load %s: %.0f QPS sustained, %s (%s %.2f Mbit/s, wire %.2f Mbit/s, lag p99 %.2f s)",
			ch, e.Sustained(), BracketText(e), t.Log, e.At.Replication.BinlogMbitS, e.At.WireMbitS(), e.At.Replication.LagP99S)
		if hasNat && ch != string(Native) {
			s += ", " + OverText(e.Over(nat)) + " native"
		}
		out = append(out, s+".")
	}

	// Scenario 3: wire ÷ native at the same target load.
	ratios := map[string][]result.WireRatio{}
	for _, w := range result.WireVsNative(pts, m) {
		ratios[w.Channel] = append(ratios[w.Channel], w)
	}
	for _, ch := range chans {
		rs := ratios[ch]
		if len(rs) == 0 {
			continue
		}
		var each []string
		for _, w := range rs {
			each = append(each, fmt.Sprintf("%s at %.0f QPS", ratioText(w.Ratio), w.Load))
		}
		out = append(out, fmt.Sprintf("bandwidth %s: wire bytes per query ÷ native's at the same load: %s.", ch, strings.Join(each, ", ")))
	}

	// Goals: the verdicts goals.json holds, in words.
	for _, j := range Goals(pts) {
		out = append(out, j.Sentence())
	}
	return out
}

// BracketText says where the true limit lies: "95% interval 1190–1262 from 8 probes" where
// the search fitted one, else "bracket 1200–1254 (+4.5%), confirmed".
func BracketText(e result.Edge) string {
	if e.Est > 0 && e.Hi > 0 {
		return fmt.Sprintf("95%% interval %.0f–%.0f from %d probes", e.Lo, e.Hi, e.Probes)
	}
	s := "no failing load found"
	if e.FirstFailed > 0 {
		s = fmt.Sprintf("bracket %.0f–%.0f (+%.1f%%)", e.Limit, e.FirstFailed, 100*e.Width())
	}
	if e.Passes >= 2 {
		return s + ", confirmed"
	}
	return s + ", not confirmed"
}

// lagHeadlines is scenario 1: lag at the largest RTT, and the worst anywhere.
func lagHeadlines(pts []result.Point, chans []string) []string {
	var out []string
	for _, ch := range chans {
		var worst, worstRTT, atMax, atMaxP99, maxRTT float64 = 0, 0, 0, 0, -1
		n := 0
		for _, p := range pts {
			if p.Series != LagVsRTT || p.Channel != ch || !p.Usable() || p.Replication == nil {
				continue
			}
			n++
			rs := p.Replication
			if rs.LagMaxS > worst {
				worst, worstRTT = rs.LagMaxS, rs.RTTMs
			}
			if rs.RTTMs > maxRTT {
				maxRTT, atMax, atMaxP99 = rs.RTTMs, rs.LagMaxS, rs.LagP99S
			}
		}
		if n > 0 {
			out = append(out, fmt.Sprintf("lag-vs-rtt %s: at RTT %g ms highest lag %.2f s (p99 %.2f s); worst over all RTTs %.2f s (at %g ms).",
				ch, maxRTT, atMax, atMaxP99, worst, worstRTT))
		}
	}
	return out
}

// OverText is a limit ratio with the range its brackets allow: "2.85× (2.49–3.42×)".
func OverText(r stats.RatioCI) string {
	if !r.Known {
		return fmt.Sprintf("%.2f× (range unknown: a limit was not bracketed)", r.Ratio)
	}
	return fmt.Sprintf("%.2f× (%.2f–%.2f×)", r.Ratio, r.Lo, r.Hi)
}

// ratioText is a ratio with its 95% interval: "0.39× (CI 0.37–0.41, 7 batches a side)".
func ratioText(c stats.Comparison) string {
	return fmt.Sprintf("%.2f× (%s)", c.Ratio, c.CIText(1, 2, ""))
}

// channelsOf is the channels present, in the report's order, then any others by name.
func channelsOf(pts []result.Point) []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range result.ReplicationChannels {
		for _, p := range pts {
			if p.Channel == c && !seen[c] {
				seen[c] = true
				out = append(out, c)
			}
		}
	}
	for _, p := range pts {
		if !seen[p.Channel] {
			seen[p.Channel] = true
			out = append(out, p.Channel)
		}
	}
	return out
}
