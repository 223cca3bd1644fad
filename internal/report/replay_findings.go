package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/result"
)

// basePlain is the series the others are set against: the one with nothing on the wire.
const basePlain = "plain"

// histogramGrain is how far apart two percentiles read from the latency histogram may be
// and still be the same: its buckets are within ±0.9% of their value.
const histogramGrain = 0.01

// topShapes is how many statement shapes the shape finding and table name.
const topShapes = 10

// ReplayFindings are a replay's findings in a DBA's words: each series' round trips per
// transaction and what the slowest wire did to its median transaction, the statement
// shapes that pay most of the network's cost, what compression, TLS or the tunnel did
// against the plain series at the same wire, the errors by statement kind, whether the
// tables ended alike at every point, and where the replayer fell behind the log. The
// report's section and the command's closing lines both print these.
func ReplayFindings(pts []result.Point) []string {
	var out []string
	for _, s := range result.ReplaySeries(pts) {
		if f := roundTripFinding(pts, s); f != "" {
			out = append(out, f)
		}
	}
	if f := shapeFinding(pts); f != "" {
		out = append(out, f)
	}
	out = append(out, seriesFindings(pts)...)
	out = append(out, replayErrorFindings(pts)...)
	if f := checksumFinding(pts); f != "" {
		out = append(out, f)
	}
	return append(out, behindFindings(pts)...)
}

// wireWords is a point's wire as a finding names it: "20 ms RTT", "20mbit, 20 ms RTT".
func wireWords(p result.Point, withRate bool) string {
	s := rttText(link.RTTMs(p.LinkDelayMs)) + " ms RTT"
	if withRate {
		s = link.FormatRate(p.LinkRateBps) + ", " + s
	}
	return s
}

// manyRates says whether pts' replay points ran on more than one rate.
func manyRates(pts []result.Point) bool {
	var rates []int64
	for _, p := range pts {
		if p.Replay != nil && !slices.Contains(rates, p.LinkRateBps) {
			rates = append(rates, p.LinkRateBps)
		}
	}
	return len(rates) > 1
}

// roundTripFinding is a series' round trips per transaction and its median transaction
// at the smallest and the largest round trip of its first rate.
func roundTripFinding(pts []result.Point, series string) string {
	var at []result.Point
	for _, p := range pts {
		if p.Replay != nil && p.Usable() && p.Series == series && (len(at) == 0 || p.LinkRateBps == at[0].LinkRateBps) {
			at = append(at, p)
		}
	}
	if len(at) == 0 {
		return ""
	}
	lo := slices.MinFunc(at, func(a, b result.Point) int { return cmpF(a.LinkDelayMs, b.LinkDelayMs) })
	hi := slices.MaxFunc(at, func(a, b result.Point) int { return cmpF(a.LinkDelayMs, b.LinkDelayMs) })
	s := fmt.Sprintf("%s: each transaction makes %s round trips (%s a statement, from the protocol)",
		series, num(hi.Replay.RoundTripsPerTxn), num(hi.Replay.RoundTripsPerStatement))
	if hi.LinkDelayMs > lo.LinkDelayMs {
		s += fmt.Sprintf("; at %s the median transaction goes from %s ms to %s ms (%s its time at %s)",
			wireWords(hi, manyRates(pts)), num(lo.Replay.TxnLatP50Ms), num(hi.Replay.TxnLatP50Ms), ratio(hi.Replay.TxnLatP50Ms, lo.Replay.TxnLatP50Ms), wireWords(lo, false))
	}
	return s
}

func cmpF(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// baseSeries is the series shapes and deltas are read from: plain when it was measured,
// else the first.
func baseSeries(pts []result.Point) string {
	ss := result.ReplaySeries(pts)
	if len(ss) == 0 {
		return ""
	}
	if slices.Contains(ss, basePlain) {
		return basePlain
	}
	return ss[0]
}

// shapeFinding names the statement shapes that pay most of what the network cost the
// base series: their time at its slowest point less at its fastest.
func shapeFinding(pts []result.Point) string {
	base := baseSeries(pts)
	fast, slow, ok := result.ReplaySpan(pts, base)
	if !ok {
		return ""
	}
	costs := positive(result.ShapeCosts(fast, slow))
	if len(costs) == 0 {
		return ""
	}
	top := costs[:min(len(costs), topShapes)]
	var share, ms float64
	var names []string
	for _, c := range top {
		share, ms = share+c.Share, ms+c.CostMs
		names = append(names, fmt.Sprintf("%s (+%s ms)", cut(c.Shape, 60), num(c.CostMs)))
	}
	return fmt.Sprintf("%s: these %d statement shapes (literals stripped) pay %s of the network's cost (%s ms of statement time at %s more than at %s): %s",
		base, len(top), pct(share), num(ms), wireWords(slow, manyRates(pts)), wireWords(fast, manyRates(pts)), strings.Join(names, "; "))
}

// positive are the costs above zero.
func positive(cs []result.ShapeCost) []result.ShapeCost {
	var out []result.ShapeCost
	for _, c := range cs {
		if c.CostMs > 0 {
			out = append(out, c)
		}
	}
	return out
}

// cut shortens a shape to n bytes for a sentence.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// seriesFindings set every other series against the base at the largest round trip
// both were measured at: the share of the bytes it saved and what it did to the median
// transaction there.
func seriesFindings(pts []result.Point) []string {
	base := baseSeries(pts)
	var out []string
	for _, s := range result.ReplaySeries(pts) {
		if s == base {
			continue
		}
		ds := result.SeriesDeltas(pts, s, base)
		if len(ds) == 0 {
			continue
		}
		d := slices.MaxFunc(ds, func(a, b result.SeriesDelta) int { return cmpF(a.DelayMs, b.DelayMs) })
		bytes := "saves " + pct(d.BytesSaved) + " of " + base + "'s bytes on the wire"
		if d.BytesSaved < 0 {
			bytes = "sends " + pct(-d.BytesSaved) + " more bytes on the wire than " + base
		}
		ms := "costs " + num(d.DeltaMs) + " ms"
		switch {
		case math.Abs(d.DeltaMs) <= histogramGrain*d.BaseTxnP50Ms:
			ms = "costs nothing measurable (the latency histogram's 1%)"
		case d.DeltaMs < 0:
			ms = "saves " + num(-d.DeltaMs) + " ms"
		}
		w := rttText(link.RTTMs(d.DelayMs)) + " ms RTT"
		if manyRates(pts) {
			w = link.FormatRate(d.RateBps) + ", " + w
		}
		out = append(out, fmt.Sprintf("%s %s and %s a transaction at %s (median %s ms against %s ms)",
			s, bytes, ms, w, num(d.TxnP50Ms), num(d.BaseTxnP50Ms)))
	}
	return out
}

// replayErrorFindings say how many statements failed and of which kinds, once for the
// points that failed alike: a rejected statement is counted, never a crash.
func replayErrorFindings(pts []result.Point) []string {
	var order []string
	at := map[string][]string{}
	for _, p := range pts {
		r := p.Replay
		if r == nil || r.Errors() == 0 {
			continue
		}
		var kinds []string
		for _, e := range r.ErrorsByKind {
			kinds = append(kinds, fmt.Sprintf("%s %d", e.Kind, e.Count))
		}
		what := fmt.Sprintf("%d of %d statements failed (%s)", r.Errors(), r.Statements, strings.Join(kinds, ", "))
		if _, ok := at[what]; !ok {
			order = append(order, what)
		}
		at[what] = append(at[what], fmt.Sprintf("%s at %s", p.Series, wireWords(p, true)))
	}
	var out []string
	for _, what := range order {
		where := strings.Join(at[what], "; ")
		if len(at[what]) == len(pts) && len(pts) > 1 {
			where = "every point"
		}
		out = append(out, fmt.Sprintf("%s: %s; the first messages are under the tables", where, what))
	}
	return out
}

// checksumFinding says whether every table ended with the same checksum after every
// point that recorded them: each started from the same data and replayed the same log.
func checksumFinding(pts []result.Point) string {
	var first *result.Point
	var differ []string
	n := 0
	for i, p := range pts {
		if p.Replay == nil || len(p.Replay.Checksums) == 0 {
			continue
		}
		n++
		if first == nil {
			first = &pts[i]
			continue
		}
		if !slices.Equal(first.Replay.Checksums, p.Replay.Checksums) {
			differ = append(differ, fmt.Sprintf("%s at %s", p.Series, wireWords(p, true)))
		}
	}
	switch {
	case n < 2:
		return ""
	case len(differ) == 0:
		return fmt.Sprintf("every table's checksum is the same after each of the %d replays: the wire changed the timing, not what the statements did", n)
	}
	return fmt.Sprintf("the tables ended differently after %d of %d replays (%s) than after the first: the log's statements do not give one result whatever their timing (sessions that race for the same rows, NOW(), RAND(), AUTO_INCREMENT across sessions)",
		len(differ), n, strings.Join(differ, "; "))
}

// behindLimitS is how late (95th percentile) the replayer may start statements against
// their schedule before a finding says so.
const behindLimitS = 0.01

// behindFindings name the points where the replayer started statements late against
// their schedule (the previous statement's end plus the think time, at the speed): its
// own lag, which is in that point's figures and is not the network's.
func behindFindings(pts []result.Point) []string {
	var out []string
	for _, p := range pts {
		if r := p.Replay; r != nil && r.BehindP95S > behindLimitS {
			out = append(out, fmt.Sprintf("%s at %s: the replayer started statements up to %s s late against their schedule (95th percentile; %s s at most): "+
				"its own lag (timer wake-ups, a busy machine, a log read too slowly), which lengthens that replay beyond what the wire did",
				p.Series, wireWords(p, true), num(r.BehindP95S), num(r.BehindMaxS)))
		}
	}
	return out
}
