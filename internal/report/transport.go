package report

import (
	"fmt"
	"strconv"

	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/stats"
)

// transportSection is the unix-socket-vs-TCP study: the same workload over a local
// socket, local TCP, TCP across the wire, and a socket forwarded over the wire by socat,
// each as a share of the local socket's throughput.
type transportSection struct{}

func (transportSection) Study() string { return "transport" }

// transportPaths is the study's order, cheapest path first; unknown transports follow.
var transportPaths = []struct{ key, label string }{
	{"socket", "local socket"},
	{"local-tcp", "local TCP"},
	{"remote-tcp", "remote TCP"},
	{"remote-socket", "remote \"socket\" (socat)"},
}

func pathLabel(t string) string {
	for _, p := range transportPaths {
		if p.key == t {
			return p.label
		}
	}
	return t
}

func (transportSection) Build(r *result.Run, pts []result.Point) ([]Block, error) {
	g := newGrid(pts, func(p result.Point) string { return p.Transport }, result.MarginOf(r).Stats())
	var paths []string
	for _, p := range transportPaths {
		if len(g.cells[p.key]) > 0 {
			paths = append(paths, p.key)
		}
	}
	for _, p := range pts {
		if !contains(paths, p.Transport) {
			paths = append(paths, p.Transport)
		}
	}
	bs := []Block{Heading{2, "Unix socket vs TCP"}, Paragraph{fmt.Sprintf(
		"The same workload over each path, at %s client threads; %% of socket is TPS relative to the local socket at the same thread count. "+
			"Wire bytes and CPU are per transaction: what each path spends to move one. %s", threadsList(g.threads), spreadNote(g.estimates(), result.MarginOf(r)))}}
	bars := &Chart{Name: "transport-pct", Title: "Throughput as % of the local socket", YLabel: "% of local-socket TPS",
		Caption: "Each path's TPS relative to the local unix socket at the same thread count (100% = socket)."}
	for _, p := range paths {
		bars.Categories = append(bars.Categories, pathLabel(p))
	}
	var findings []string
	for gi, th := range g.threads {
		t := Table{Header: []string{"path", "TPS", "QPS", "p95 ms", "% of socket", "wire bytes/txn",
			"client CPU ms/txn", "server CPU ms/txn", "bottleneck", "wire check"}}
		if len(g.threads) > 1 {
			t.Caption = strconv.Itoa(th) + " threads"
		}
		t.Numeric = numericCols(len(t.Header))
		t.Numeric[8], t.Numeric[9] = false, false
		base := g.at("socket", th)
		grp := BarGroup{Label: strconv.Itoa(th) + " threads", Color: gi}
		for _, p := range paths {
			c := g.at(p, th)
			share, ok := tpsRatio(base, c)
			text := "–"
			switch {
			case ok && p == "socket":
				grp.Values = append(grp.Values, 100)
				text = "100% (reference)"
			case ok:
				grp.Values = append(grp.Values, share.Ratio*100)
				text = share.shareCell()
			default:
				grp.Values = append(grp.Values, 0)
			}
			grp.Texts = append(grp.Texts, pctOrDash(share.Ratio))
			t.Rows = append(t.Rows, transportRow(p, c, text))
		}
		bars.Bars = append(bars.Bars, grp)
		bs = append(bs, t)
		findings = append(findings, transportFindings(g, th)...)
	}
	if len(findings) > 0 {
		bs = append(bs, Heading{3, "Findings"}, List{findings})
	}
	return append(bs, bars), nil
}

func transportTPS(c *cell) float64 {
	if c.failed() {
		return 0
	}
	m, _ := c.tps()
	return m
}

func pctOrDash(f float64) string {
	if f == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f%%", f*100)
}

func transportRow(path string, c *cell, share string) []string {
	if c.failed() {
		why := "not measured"
		if c != nil && len(c.all) > 0 {
			why = "failed: " + orDash(c.all[0].FailReason)
		}
		return []string{pathLabel(path), c.tpsText(), "–", "–", "–", "–", "–", "–", why, "–"}
	}
	tps := transportTPS(c)
	perTxn := func(f func(result.Point) float64) float64 { return c.mean(f) / tps }
	wire := perTxn(func(p result.Point) float64 { return p.WireBytesPerSUp + p.WireBytesPerSDown })
	wireText := "–"
	if wire > 0 {
		wireText = strconv.FormatFloat(wire, 'f', 0, 64)
	}
	return []string{pathLabel(path), c.tpsText(),
		num(c.mean(func(p result.Point) float64 { return p.QPS })),
		num(c.mean(func(p result.Point) float64 { return p.LatP95Ms })),
		share, wireText,
		num(1000 * perTxn(func(p result.Point) float64 { return p.CPUClient })),
		num(1000 * perTxn(func(p result.Point) float64 { return p.CPUServer })),
		orDash(c.bottleneck()), checkText(c)}
}

// transportFindings prices each step away from the local socket: TCP on one host, the
// wire, the socat hop. Each share carries its 95% interval and the verdict read from it;
// a step the run was too short to judge says what was seen and what would decide.
func transportFindings(g *grid[string], th int) []string {
	p95 := func(c *cell) float64 { return c.mean(func(p result.Point) float64 { return p.LatP95Ms }) }
	var out []string
	step := func(from, to, what string) {
		a, b := g.at(from, th), g.at(to, th)
		ci, ok := tpsRatio(a, b)
		if !ok {
			return
		}
		var verdict string
		switch ci.Verdict {
		case stats.Lower:
			verdict = "costs " + pct(1-ci.Ratio) + " of throughput"
		case stats.Higher:
			verdict = "costs " + cost(ci.Ratio)
		case stats.NoDifference:
			verdict = "makes no measurable difference to throughput"
		default:
			verdict = undecided([]comparison{ci}, "cannot be told apart")
		}
		f := fmt.Sprintf("%s %s at %s: %s %s TPS → %s %s TPS (%.1f%% of it, %s), p95 %s → %s ms.",
			what, verdict, threadsN(th), pathLabel(from), num(transportTPS(a)), pathLabel(to), num(transportTPS(b)),
			100*ci.Ratio, ci.shareCIText(), num(p95(a)), num(p95(b)))
		if d := ci.toDecide(); d != "" {
			f += " Seen: " + ci.seen() + ". To tell: " + d + "."
		}
		out = append(out, f)
	}
	step("socket", "local-tcp", "TCP instead of a socket on one host")
	step("local-tcp", "remote-tcp", "Crossing the wire")
	step("remote-tcp", "remote-socket", "The extra socat hop")
	if ci, ok := tpsRatio(g.at("socket", th), g.at("remote-tcp", th)); ok {
		out = append(out, fmt.Sprintf("Moving the client off the database host keeps %.1f%% (%s) of local-socket throughput at %s.",
			100*ci.Ratio, ci.shareCIText(), threadsN(th)))
	}
	return out
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}
