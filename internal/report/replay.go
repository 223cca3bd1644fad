package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/result"
)

// replaySection is `wirelab replay`: a captured log replayed at each wire of a sweep and
// in each series. The findings (ReplayFindings), the latency and round trips per point,
// the wire and what each side cost, the statements by kind, the shapes that pay the
// network's cost, the errors' first messages, the tables' checksums, and the median
// transaction by RTT as a chart. Numbers come from Point.Replay and the point's own
// fields.
type replaySection struct{}

func (replaySection) Study() string { return "replay" }

func (replaySection) Build(r *result.Run, pts []result.Point) ([]Block, error) {
	bs := []Block{Heading{2, "Replay of " + orDash(r.Spec.Workload)}, Paragraph{replayIntro(r, pts)}}
	if fs := ReplayFindings(pts); len(fs) > 0 {
		bs = append(bs, Heading{3, "Findings"}, List{fs})
	}
	var bad []string
	for _, p := range pts {
		if !p.Usable() {
			bad = append(bad, fmt.Sprintf("%s at %s: %s", p.Series, wireWords(p, true), orDash(p.FailReason)))
		}
	}
	if len(bad) > 0 {
		bs = append(bs, Callout{"warning", fmt.Sprintf("%d point(s) failed, left out of the findings: %s.", len(bad), strings.Join(bad, "; "))})
	}
	bs = append(bs, replayLatencyTable(pts), replayWireTable(pts), replayKindTable(pts))
	if t, ok := replayShapeTable(pts); ok {
		bs = append(bs, t)
	}
	if d, ok := replayErrorDetails(pts); ok {
		bs = append(bs, d)
	}
	if t, ok := replayChecksumTable(pts); ok {
		bs = append(bs, t)
	}
	if c := replayChart(pts); c != nil {
		bs = append(bs, c)
	}
	return bs, nil
}

// replayIntro says what was replayed, how, and where each session's figures are.
func replayIntro(r *result.Run, pts []result.Point) string {
	x := r.Spec.Extra
	s := fmt.Sprintf("The %s log %s, %s sessions and %s statements, replayed at --speed %s", orDash(x["format"]), orDash(x["log"]),
		orDash(x["sessions"]), orDash(x["statements"]), orDash(x["speed"]))
	s += fmt.Sprintf(" in %d point(s): each series (%s) at each wire, every point from the same data (%s). ",
		len(pts), strings.Join(result.ReplaySeries(pts), ", "), orDash(x["data"]))
	s += "Statement latency runs from a statement's send to the last byte of its reply; a transaction's from its first statement's send to its last reply, less the think time inside it. " +
		"Round trips and bytes per statement kind are the protocol's, counted by the replayer below TLS and compression. " +
		"Each point's sessions, with their round trips and time, are in the results directory (sessions-NN-SERIES.jsonl)."
	return s
}

// linkCells are a point's wire as two table cells: its rate and its RTT in ms.
func linkCells(p result.Point) []string {
	return []string{link.FormatRate(p.LinkRateBps), rttText(link.RTTMs(p.LinkDelayMs))}
}

// replayLatencyTable is each point's sessions, statements, errors, wall time, statement
// and transaction percentiles and round trips.
func replayLatencyTable(pts []result.Point) Table {
	t := Table{Caption: "Per point: what was replayed and what it took (ms)",
		Header: []string{"series", "rate", "RTT ms", "sessions", "statements", "errors", "wall s", "statement p50", "p95", "p99",
			"transaction p50", "p95", "p99", "round trips / txn", "connect round trips"}}
	t.Numeric = numericCols(len(t.Header))
	t.Numeric[1] = false
	for _, p := range pts {
		r := p.Replay
		if r == nil {
			continue
		}
		row := append([]string{p.Series}, linkCells(p)...)
		row = append(row, strconv.FormatInt(r.Sessions, 10), strconv.FormatInt(r.Statements, 10), strconv.FormatInt(p.Errors, 10),
			num(r.WallS), num(p.LatP50Ms), num(p.LatP95Ms), num(p.LatP99Ms), num(r.TxnLatP50Ms), num(r.TxnLatP95Ms), num(r.TxnLatP99Ms),
			num(r.RoundTripsPerTxn), strconv.FormatInt(r.ConnectRoundTrips, 10))
		t.Rows = append(t.Rows, row)
	}
	return t
}

// replayWireTable is each point's wire and CPU, its verdict, the replayer's own lag and
// the data's reset before it.
func replayWireTable(pts []result.Point) Table {
	t := Table{Caption: "Per point: the wire and the CPU (wire up = client → server; CPU in cores; the client is the replayer)",
		Header: []string{"series", "rate", "RTT ms", "statements/s", "transactions/s", "wire MB/s up", "down", "link utilisation",
			"server CPU", "client CPU", "bottleneck", "late p95 s", "reset s", "wire check"}}
	t.Numeric = numericCols(len(t.Header))
	t.Numeric[1], t.Numeric[10], t.Numeric[13] = false, false, false
	for _, p := range pts {
		r := p.Replay
		if r == nil {
			continue
		}
		row := append([]string{p.Series}, linkCells(p)...)
		row = append(row, num(p.QPS), num(p.TPS), mbps(p.WireBytesPerSUp), mbps(p.WireBytesPerSDown), pct(p.LinkUtilization),
			num(p.CPUServer), num(p.CPUClient), orDash(p.Bottleneck), num(r.BehindP95S), num(r.ResetS), orDash(checkFlag(p)))
		t.Rows = append(t.Rows, row)
	}
	return t
}

// replayKindTable is each point's statements by kind: what they sent and received, their
// round trips and time.
func replayKindTable(pts []result.Point) Table {
	t := Table{Caption: "Statements by kind: the protocol's bytes each way (client → server out), round trips and time",
		Header: []string{"series", "rate", "RTT ms", "kind", "statements", "errors", "round trips", "bytes out", "bytes in",
			"out / statement", "in / statement", "time ms"}}
	t.Numeric = numericCols(len(t.Header))
	t.Numeric[1], t.Numeric[3] = false, false
	for _, p := range pts {
		if p.Replay == nil {
			continue
		}
		for _, k := range p.Replay.Kinds {
			row := append([]string{p.Series}, linkCells(p)...)
			row = append(row, k.Kind, strconv.FormatInt(k.Statements, 10), strconv.FormatInt(k.Errors, 10), strconv.FormatInt(k.RoundTrips, 10),
				strconv.FormatInt(k.BytesOut, 10), strconv.FormatInt(k.BytesIn, 10), perStatement(k.BytesOut, k.Statements),
				perStatement(k.BytesIn, k.Statements), num(k.TimeMs))
			t.Rows = append(t.Rows, row)
		}
	}
	return t
}

func perStatement(bytes, n int64) string {
	if n == 0 {
		return "–"
	}
	return num(float64(bytes) / float64(n))
}

// replayShapeTable is the base series' shapes by what the network cost them.
func replayShapeTable(pts []result.Point) (Table, bool) {
	base := baseSeries(pts)
	fast, slow, ok := result.ReplaySpan(pts, base)
	if !ok {
		return Table{}, false
	}
	costs := positive(result.ShapeCosts(fast, slow))
	if len(costs) == 0 {
		return Table{}, false
	}
	t := Table{Caption: fmt.Sprintf("The statement shapes that pay the network's cost (%s): time at %s less time at %s",
		base, wireWords(slow, true), wireWords(fast, true)),
		Header:  []string{"shape", "kind", "count", "ms at the fastest", "ms at the slowest", "cost ms", "share"},
		Numeric: []bool{false, false, true, true, true, true, true}}
	for _, c := range costs[:min(len(costs), topShapes)] {
		t.Rows = append(t.Rows, []string{cut(c.Shape, 120), c.Kind, strconv.FormatInt(c.Count, 10), num(c.FastMs), num(c.SlowMs), num(c.CostMs), pct(c.Share)})
	}
	return t, true
}

// replayErrorDetails are the first messages of every point's errors, by kind.
func replayErrorDetails(pts []result.Point) (Block, bool) {
	var b strings.Builder
	for _, p := range pts {
		if p.Replay == nil {
			continue
		}
		for _, e := range p.Replay.ErrorsByKind {
			fmt.Fprintf(&b, "%s at %s, %s (%d):\n", p.Series, wireWords(p, true), e.Kind, e.Count)
			for _, s := range e.Samples {
				fmt.Fprintf(&b, "  line %d: %s\n", s.Line, s.Message)
			}
		}
	}
	if b.Len() == 0 {
		return nil, false
	}
	return Details{Summary: "The errors' first messages, with their log lines", Text: strings.TrimRight(b.String(), "\n")}, true
}

// replayChecksumTable is every table's checksum after each point that recorded them, a
// column per point.
func replayChecksumTable(pts []result.Point) (Table, bool) {
	var cols []result.Point
	var tables []string
	for _, p := range pts {
		if p.Replay == nil || len(p.Replay.Checksums) == 0 {
			continue
		}
		cols = append(cols, p)
		for _, c := range p.Replay.Checksums {
			if !slices.Contains(tables, c.Table) {
				tables = append(tables, c.Table)
			}
		}
	}
	if len(cols) == 0 {
		return Table{}, false
	}
	slices.Sort(tables)
	t := Table{Caption: "Every table's checksum after each replay", Header: []string{"table"}}
	for _, p := range cols {
		t.Header = append(t.Header, fmt.Sprintf("%s, %s", p.Series, wireWords(p, false)))
	}
	t.Numeric = make([]bool, len(t.Header))
	for _, name := range tables {
		row := []string{name}
		for _, p := range cols {
			v := "–"
			for _, c := range p.Replay.Checksums {
				if c.Table == name {
					v = c.Checksum
				}
			}
			row = append(row, v)
		}
		t.Rows = append(t.Rows, row)
	}
	return t, true
}

// replayChart is the median transaction by RTT, a line per series (and rate, when
// several were swept); nil with fewer than two round trips.
func replayChart(pts []result.Point) *Chart {
	many := manyRates(pts)
	c := &Chart{Name: "replay-txn", Title: "Median transaction vs round-trip time", XLabel: "round-trip time (ms)",
		YLabel: "transaction p50 (ms)", Caption: "Each line climbs by the transaction's round trips for every ms of RTT."}
	lines := map[string]int{}
	var rtts []float64
	for _, p := range pts {
		if p.Replay == nil || !p.Usable() {
			continue
		}
		label := p.Series
		if many {
			label += " " + link.FormatRate(p.LinkRateBps)
		}
		i, ok := lines[label]
		if !ok {
			i = len(c.Lines)
			lines[label] = i
			c.Lines = append(c.Lines, ChartLine{Label: label, Color: i})
		}
		x := link.RTTMs(p.LinkDelayMs)
		c.Lines[i].Points = append(c.Lines[i].Points, XY{x, p.Replay.TxnLatP50Ms})
		if !slices.Contains(rtts, x) {
			rtts = append(rtts, x)
		}
	}
	if len(rtts) < 2 {
		return nil
	}
	for i := range c.Lines {
		slices.SortFunc(c.Lines[i].Points, func(a, b XY) int { return cmpF(a.X, b.X) })
	}
	return c
}

// replayerCostRow is the environment's account of what the replayer itself cost: its
// CPU as a share of the machine and its peak memory, the most of any point; ok is false
// without a replay point.
func replayerCostRow(r *result.Run) (row []string, ok bool) {
	var share, cpu, wall float64
	var rss int64
	var at string
	cores := max(r.Environment.CPUs, 1)
	for _, p := range r.Points {
		x := p.Replay
		if x == nil || x.WallS <= 0 {
			continue
		}
		ok = true
		if s := x.CPUS / x.WallS / float64(cores); s >= share {
			share, cpu, wall, at = s, x.CPUS, x.WallS, fmt.Sprintf("%s at %s", p.Series, wireWords(p, true))
		}
		rss = max(rss, x.MaxRSSBytes)
	}
	if !ok {
		return nil, false
	}
	return []string{"replayer's own cost", fmt.Sprintf("at most %s of the machine's %d cores (%s s of CPU over a %s s replay, %s), peak memory %s MiB",
		pct(share), cores, num(cpu), num(wall), at, num(float64(rss)/(1<<20)))}, true
}
