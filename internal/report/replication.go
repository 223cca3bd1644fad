package report

import (
	"fmt"
	"github.com/wirelab/wirelab/internal/metrics"
	"sort"
	"strings"

	"github.com/wirelab/wirelab/internal/result"
)

// replicationSection is the weak-network replication study (DTLE 2021): per scenario
// (Point.Series: lag-vs-rtt, max-load, bandwidth) a table and chart comparing the
// channels (native, native-compressed, tunnel), plus lag over time. Numbers come from
// Point.Extra; a point that failed or whose checksum did not match is shown and called out.
type replicationSection struct{}

func (replicationSection) Study() string { return "replication" }

var channelOrder = []string{"native", "native-compressed", "tunnel"}

// repCell is every repeat of one channel at one x (RTT or load).
type repCell struct{ all, ok []result.Point }

func (c *repCell) failed() bool { return c == nil || len(c.ok) == 0 }

// ex is the mean of Extra[key] over the successful repeats; ok is false when absent.
func (c *repCell) ex(key string) (float64, bool) {
	if c.failed() {
		return 0, false
	}
	var xs []float64
	for _, p := range c.ok {
		if v, ok := p.Extra[key]; ok {
			xs = append(xs, v)
		}
	}
	return metrics.Mean(xs), len(xs) > 0
}

// bounded is false when any repeat saw lag grow without bound.
func (c *repCell) bounded() bool {
	for _, p := range c.ok {
		if v, ok := p.Extra["bounded"]; ok && v == 0 {
			return false
		}
	}
	return true
}

// why is what the failed cell shows instead of numbers.
func (c *repCell) why() string {
	if c == nil {
		return "–"
	}
	for _, p := range c.all {
		if p.Failed {
			return "FAILED"
		}
	}
	return "checksum mismatch"
}

// repFailed reports a point whose numbers must not be used.
func repFailed(p result.Point) bool {
	v, ok := p.Extra["checksum_ok"]
	return p.Failed || ok && v == 0
}

// scenario is the points of one scenario by channel and x.
type scenario struct {
	name     string
	channels []string
	xs       []float64
	cells    map[string]map[float64]*repCell
}

func newScenario(name string, pts []result.Point, x func(result.Point) float64) *scenario {
	s := &scenario{name: name, cells: map[string]map[float64]*repCell{}}
	seenX := map[float64]bool{}
	for _, p := range pts {
		if s.cells[p.Channel] == nil {
			s.cells[p.Channel] = map[float64]*repCell{}
		}
		xv := x(p)
		c := s.cells[p.Channel][xv]
		if c == nil {
			c = &repCell{}
			s.cells[p.Channel][xv] = c
		}
		c.all = append(c.all, p)
		if !repFailed(p) {
			c.ok = append(c.ok, p)
		}
		if !seenX[xv] {
			seenX[xv] = true
			s.xs = append(s.xs, xv)
		}
	}
	sort.Float64s(s.xs)
	for _, ch := range channelOrder {
		if s.cells[ch] != nil {
			s.channels = append(s.channels, ch)
		}
	}
	var rest []string
	for ch := range s.cells {
		if !contains(s.channels, ch) {
			rest = append(rest, ch)
		}
	}
	sort.Strings(rest)
	s.channels = append(s.channels, rest...)
	return s
}

func (s *scenario) at(ch string, x float64) *repCell { return s.cells[ch][x] }

func rttOf(p result.Point) float64 {
	if v, ok := p.Extra["rtt_ms"]; ok {
		return v
	}
	return 2 * p.LinkDelayMs
}

func loadOf(p result.Point) float64 {
	if v, ok := p.Extra["target_qps"]; ok {
		return v
	}
	return p.QPS
}

func (replicationSection) Build(r *result.Run, pts []result.Point) ([]Block, error) {
	bs := []Block{Heading{2, "Replication over a weak network"}, Paragraph{
		"Each scenario compares the replication channels under the same link. Lag is how far the replica is behind the source; " +
			"a load is sustainable when lag stays bounded over the run and the replica's checksum matches the source's."}}
	var failed []string
	for _, p := range pts {
		if repFailed(p) {
			why := p.FailReason
			if why == "" {
				why = "checksum mismatch between source and replica"
			}
			failed = append(failed, fmt.Sprintf("%s/%s rtt %g ms, load %g qps: %s", p.Series, p.Channel, rttOf(p), loadOf(p), why))
		}
	}
	if len(failed) > 0 {
		bs = append(bs, Callout{"warning", fmt.Sprintf("%d replication point(s) failed and are left out of the numbers (shown as FAILED or checksum mismatch in the tables): %s.",
			len(failed), strings.Join(failed, "; "))})
	}
	for _, name := range seriesOrder(pts) {
		sp := seriesPoints(pts, name)
		var blocks []Block
		switch name {
		case "lag-vs-rtt":
			blocks = lagVsRTT(newScenario(name, sp, rttOf))
		case "max-load":
			blocks = maxLoad(newScenario(name, sp, loadOf))
		case "bandwidth":
			blocks = repBandwidth(newScenario(name, sp, loadOf))
		default:
			blocks = []Block{Heading{3, "Scenario " + name}, pointsTable("Points as measured", sp)}
		}
		bs = append(bs, blocks...)
		if c := lagOverTime(name, sp); c != nil {
			bs = append(bs, c)
		}
	}
	return bs, nil
}

func seriesPoints(pts []result.Point, series string) []result.Point {
	var out []result.Point
	for _, p := range pts {
		if p.Series == series {
			out = append(out, p)
		}
	}
	return out
}

// lagOverTime draws, for each channel, the per-second lag of its worst point in the
// scenario (highest lag_max_s): the line that shows whether lag settles or keeps growing.
func lagOverTime(name string, pts []result.Point) *Chart {
	if c := searchEdges(name, pts); c != nil {
		return c
	}
	worst := map[string]result.Point{}
	for _, p := range pts {
		hasLag := false
		for _, s := range p.Seconds {
			hasLag = hasLag || s.Lag > 0
		}
		if !hasLag {
			continue
		}
		if w, ok := worst[p.Channel]; !ok || p.Extra["lag_max_s"] > w.Extra["lag_max_s"] {
			worst[p.Channel] = p
		}
	}
	if len(worst) == 0 {
		return nil
	}
	c := &Chart{Name: "replication-lag-time-" + name, Title: "Replication lag over time: " + name,
		XLabel: "time since the point started (s)", YLabel: "replication lag (s)",
		Caption: "Per-second lag of each channel's worst point in this scenario (the legend says which); a line that keeps rising is lag that never catches up."}
	i := 0
	for _, ch := range append(append([]string{}, channelOrder...), sortedKeys(worst)...) {
		p, ok := worst[ch]
		if !ok {
			continue
		}
		delete(worst, ch)
		c.Lines = append(c.Lines, lagLine(fmt.Sprintf("%s (rtt %g ms, %g qps)", ch, rttOf(p), loadOf(p)), p, i, false))
		i++
	}
	return c
}

// searchEdges draws, per channel, the max-load search's last bounded rate (solid) and its
// first unbounded one (dashed): the edge the scenario found. nil when the points carry no
// search marks.
func searchEdges(name string, pts []result.Point) *Chart {
	c := &Chart{Name: "replication-lag-time-" + name, Title: "Replication lag at the edge of the sustainable load",
		XLabel: "time since the point started (s)", YLabel: "replication lag (s)",
		Caption: "Per channel: the highest load whose lag stayed bounded (solid) and the lowest load whose lag grew (dashed)."}
	for i, ch := range channelOrder {
		for _, p := range pts {
			if p.Channel != ch {
				continue
			}
			switch {
			case p.Extra["search_last_bounded"] == 1:
				c.Lines = append(c.Lines, lagLine(fmt.Sprintf("%s %g qps, bounded", ch, loadOf(p)), p, i, false))
			case p.Extra["search_first_unbounded"] == 1:
				c.Lines = append(c.Lines, lagLine(fmt.Sprintf("%s %g qps, unbounded", ch, loadOf(p)), p, i, true))
			}
		}
	}
	if len(c.Lines) == 0 {
		return nil
	}
	return c
}

func lagLine(label string, p result.Point, color int, dashed bool) ChartLine {
	l := ChartLine{Label: label, Color: color, Dashed: dashed}
	for _, s := range p.Seconds {
		l.Points = append(l.Points, XY{s.T, s.Lag})
	}
	return l
}

func sortedKeys(m map[string]result.Point) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
