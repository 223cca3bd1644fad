package report

import (
	"fmt"
	"github.com/wirelab/wirelab/internal/stats"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/result"
)

// replicationSection is the weak-network replication study (DTLE 2021): per scenario
// (Point.Series: lag-vs-rtt, max-load, bandwidth) a table and chart comparing the
// channels (native, native-compressed, tunnel), plus lag over time. Numbers come from
// Point.Replication; a point that failed or whose checksum did not match is shown and
// called out.
type replicationSection struct{}

func (replicationSection) Study() string { return "replication" }

var channelOrder = result.ReplicationChannels

// repCell is every repeat of one channel at one x (RTT or load).
type repCell struct{ all, ok []result.Point }

func (c *repCell) failed() bool { return c == nil || len(c.ok) == 0 }

// mean is the mean of a figure over the successful repeats; ok is false when there are none.
func (c *repCell) mean(fig func(result.Point) float64) (float64, bool) {
	if c.failed() {
		return 0, false
	}
	var xs []float64
	for _, p := range c.ok {
		xs = append(xs, fig(p))
	}
	return stats.Mean(xs), true
}

// The replication figures the tables show.
func lagMax(p result.Point) float64      { return p.Replication.LagMaxS }
func lagP99(p result.Point) float64      { return p.Replication.LagP99S }
func wireMbit(p result.Point) float64    { return p.WireMbitS() }
func binlogMbit(p result.Point) float64  { return p.Replication.BinlogMbitS }
func achievedQPS(p result.Point) float64 { return p.QPS }

// bounded is false when any repeat saw lag grow without bound.
func (c *repCell) bounded() bool {
	for _, p := range c.ok {
		if !p.Replication.Bounded {
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
			return pointWhy(p)
		}
	}
	return pointWhy(c.all[0])
}

// repFailed reports a point whose numbers must not be used.
func repFailed(p result.Point) bool { return !p.Usable() || p.Replication == nil }

// scenario is the points of one scenario by channel and x.
type scenario struct {
	name     string
	channels []string
	xs       []float64
	cells    map[string]map[float64]*repCell
	order    map[string][]result.Point // each channel's points in run order
}

func newScenario(name string, pts []result.Point, x func(result.Point) float64) *scenario {
	s := &scenario{name: name, cells: map[string]map[float64]*repCell{}, order: map[string][]result.Point{}}
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
		s.order[p.Channel] = append(s.order[p.Channel], p)
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
	if p.Replication != nil {
		return p.Replication.RTTMs
	}
	return link.RTTMs(p.LinkDelayMs)
}

func loadOf(p result.Point) float64 {
	if p.Replication != nil {
		return p.Replication.TargetQPS
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
		case result.MaxLoadSeries:
			blocks = append(maxLoad(newScenario(name, sp, loadOf), sp, logTerm(r), result.MarginOf(r)), maxLoadFit(sp)...)
		case "bandwidth":
			blocks = repBandwidth(newScenario(name, sp, loadOf), sp, result.MarginOf(r))
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

// logTerm is the engine's name for the replication log whose rate the tables show in
// binlog_mbit_s: PostgreSQL's WAL, MariaDB's binlog (also for files without an engine).
func logTerm(r *result.Run) string {
	if r != nil && r.Spec.Extra["engine"] == "postgres" {
		return "WAL"
	}
	return "binlog"
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
		if p.Replication == nil {
			continue
		}
		if w, ok := worst[p.Channel]; !ok || p.Replication.LagMaxS > w.Replication.LagMaxS {
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
	for _, ch := range append(append([]string{}, channelOrder...), slices.Sorted(maps.Keys(worst))...) {
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

// searchEdges draws, per channel, the max-load search's limit (solid) and the lowest
// failing load above it (dashed): the edge the scenario found. nil for other scenarios.
func searchEdges(name string, pts []result.Point) *Chart {
	if name != result.MaxLoadSeries {
		return nil
	}
	c := &Chart{Name: "replication-lag-time-" + name, Title: "Replication lag at the edge of the sustainable load",
		XLabel: "time since the point started (s)", YLabel: "replication lag (s)",
		Caption: "Per channel: the highest load whose lag stayed bounded (solid) and the lowest load whose lag grew (dashed)."}
	for i, e := range result.MaxLoads(pts) {
		if e.At != nil {
			c.Lines = append(c.Lines, lagLine(fmt.Sprintf("%s %g qps, bounded", e.Channel, e.Limit), *e.At, i, false))
		}
		if e.Failed != nil {
			c.Lines = append(c.Lines, lagLine(fmt.Sprintf("%s %g qps, unbounded", e.Channel, e.FirstFailed), *e.Failed, i, true))
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
