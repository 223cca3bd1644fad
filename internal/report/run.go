package report

import (
	"fmt"
	"github.com/wirelab/wirelab/internal/link"
	"strconv"

	"github.com/wirelab/wirelab/internal/result"
)

// runSection draws `wirelab run`: one (or a few) series over thread counts.
type runSection struct{}

func (runSection) Study() string { return "run" }

func (runSection) Build(r *result.Run, pts []result.Point) ([]Block, error) {
	series := seriesOrder(pts)
	g := newGrid(pts, func(p result.Point) string { return p.Series }, result.MarginOf(r).Stats())
	w := wordsFor(pts)
	if withHistograms(pts) {
		w.latency, w.percentiles = latencyHeader, true
	}
	bs := []Block{Heading{2, "Run"}, Paragraph{runIntro(pts[0], g.threads, w)}}
	chart := &Chart{Name: "run-tps", Title: "Throughput vs " + w.conns, XLabel: w.conns + " (log2)",
		YLabel: "transactions per second", Log2X: spansLog(g.threads),
		Caption: "Mean TPS per " + w.conn + " count; where the line flattens, see the bottleneck column."}
	for i, s := range series {
		t := Table{Caption: "Series " + s, Header: []string{w.column, "TPS", "QPS", w.latency,
			"wire MB/s up", "wire MB/s down", "link utilisation", "server CPU (cores)", "client CPU (cores)", "bottleneck", "wire check"}}
		t.Numeric = numericCols(len(t.Header))
		t.Numeric[9], t.Numeric[10] = false, false
		for _, th := range g.threads {
			c := g.at(s, th)
			if c == nil {
				continue
			}
			t.Rows = append(t.Rows, runRow(th, c, w))
		}
		bs = append(bs, t)
		chart.Lines = append(chart.Lines, ChartLine{Label: s, Points: g.line(s), Color: i})
		if f := peakFinding(s, g, s, w.column); f != "" {
			bs = append(bs, Paragraph{f})
		}
	}
	bs = append(bs, Paragraph{"MB/s is 10^6 bytes per second on the wire host's egress, per direction (up = client to server). CPU is in cores busy, averaged over the point after warm-up." + w.note})
	return append(bs, chart), nil
}

// loadWords are the words and the latency column of the driver that made a run's points.
type loadWords struct {
	conns, conn, column string // what the x axis counts: client threads, or pgbench clients
	latency             string // the latency column's header
	pgbench             bool   // latency is the driver's mean ± deviation, not sysbench's p95
	percentiles         bool   // latency is the percentiles of the points' histograms
	note                string // a sentence after the tables on what the driver does not measure
}

// wordsFor names pgbench's clients and shows its measured mean latency when every point
// came from pgbench (it reports no percentile, and counts transactions only); sysbench's
// words otherwise.
func wordsFor(pts []result.Point) loadWords {
	for _, p := range pts {
		if p.Driver != "pgbench" {
			return loadWords{conns: "client threads", conn: "thread", column: "threads", latency: "p95 ms"}
		}
	}
	return loadWords{conns: "pgbench clients", conn: "client", column: "clients", latency: "latency ms (mean ± sd)",
		pgbench: true, note: " pgbench reports transactions, not statements: QPS is TPS × the script's statements, each a round trip; " +
			"its latency is the mean and standard deviation over the measured seconds (pgbench reports no percentile)."}
}

func runIntro(p result.Point, threads []int, w loadWords) string {
	s := fmt.Sprintf("Workload %s over %s threads on a link of %s", orDash(p.Workload), threadsList(threads), link.FormatRate(p.LinkRateBps))
	if w.pgbench {
		s = fmt.Sprintf("pgbench's %s script over %s clients on a link of %s", orDash(p.Workload), threadsList(threads), link.FormatRate(p.LinkRateBps))
	}
	if p.LinkDelayMs > 0 {
		s += fmt.Sprintf(" with %g ms one-way delay", p.LinkDelayMs)
	}
	if p.Compression {
		s += ", protocol compression on"
	}
	if p.TLS {
		s += ", TLS on"
	}
	if p.Transport != "" {
		s += ", transport " + p.Transport
	}
	return s + "."
}

func runRow(th int, c *cell, w loadWords) []string {
	if c.failed() {
		reason := "failed"
		if len(c.all) > 0 {
			reason = "failed: " + orDash(c.all[0].FailReason)
		}
		return []string{strconv.Itoa(th), "FAILED", "–", "–", "–", "–", "–", "–", "–", reason, checkText(c)}
	}
	rate := c.ok[0].LinkRateBps
	f := func(get func(result.Point) float64) float64 { return c.mean(get) }
	lat := num(f(func(p result.Point) float64 { return p.LatP95Ms }))
	switch {
	case w.percentiles:
		lat = latencyCell(c.ok)
	case w.pgbench:
		lat = num(f(func(p result.Point) float64 { return p.LatAvgMs })) + " ± " + num(f(func(p result.Point) float64 { return p.LatStddevMs }))
	}
	return []string{strconv.Itoa(th), c.tpsText(),
		num(f(func(p result.Point) float64 { return p.QPS })),
		lat,
		mbps(f(func(p result.Point) float64 { return p.WireBytesPerSUp })),
		mbps(f(func(p result.Point) float64 { return p.WireBytesPerSDown })),
		utilText(f(func(p result.Point) float64 { return p.LinkUtilization }), rate),
		num(f(func(p result.Point) float64 { return p.CPUServer })),
		num(f(func(p result.Point) float64 { return p.CPUClient })),
		orDash(c.bottleneck()), checkText(c)}
}

// checkText is the wire-check column: the verdicts of the repeats that failed it.
func checkText(c *cell) string {
	for _, p := range c.all {
		if f := checkFlag(p); f != "" {
			return f
		}
	}
	for _, p := range c.all {
		if p.WireCheck != nil {
			return "ok"
		}
	}
	return "–"
}

// peakFinding says where a series peaks and what limited it there; conns names what the
// thread counts count ("threads", "clients").
func peakFinding[K comparable](label string, g *grid[K], k K, conns string) string {
	best, bestT := 0.0, 0
	for _, t := range g.threads {
		if c := g.at(k, t); !c.failed() {
			if m, _ := c.tps(); m > best {
				best, bestT = m, t
			}
		}
	}
	if bestT == 0 {
		return ""
	}
	c := g.at(k, bestT)
	return fmt.Sprintf("%s peaks at %s TPS with %d %s; the bottleneck there is %s.", label, num(best), bestT, conns, orDash(c.bottleneck()))
}

// seriesOrder is the distinct Series of pts in first-seen order.
func seriesOrder(pts []result.Point) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range pts {
		if !seen[p.Series] {
			seen[p.Series] = true
			out = append(out, p.Series)
		}
	}
	return out
}

// spansLog says whether thread counts spread enough for a log2 axis to help.
func spansLog(ts []int) bool { return len(ts) > 1 && ts[0] > 0 && ts[len(ts)-1] >= 4*ts[0] }
