package report

import (
	"fmt"
	"github.com/wirelab/wirelab/internal/link"
	"math"

	"github.com/wirelab/wirelab/internal/result"
)

const mib = 1 << 20

// wireChart is the post's PMM screenshot: the slow link's per-second wire traffic across
// its plain points in run order, with the link capacity as a line to bump against.
func (s *bwStudy) wireChart() *Chart {
	if len(s.links) == 0 {
		return nil
	}
	slow := s.links[0]
	var down, up []XY
	var vlines []float64
	var marks []ChartMark
	ymax, off := 0.0, 0.0
	var segs []result.Point
	for _, p := range s.pts {
		if p.LinkRateBps == slow && variantOf(p) == plain && len(p.Seconds) > 0 {
			segs = append(segs, p)
		}
	}
	if len(segs) == 0 {
		return nil
	}
	for _, p := range segs {
		if off > 0 {
			vlines = append(vlines, off)
		}
		marks = append(marks, ChartMark{X: off + 0.5, Text: fmt.Sprintf("%d thr", p.Threads)})
		last := 0.0
		for _, sec := range p.Seconds {
			down = append(down, XY{off + sec.T, sec.WireDownBps / mib})
			up = append(up, XY{off + sec.T, sec.WireUpBps / mib})
			ymax = math.Max(ymax, math.Max(sec.WireDownBps, sec.WireUpBps)/mib)
			last = sec.T
		}
		off += last + 1
	}
	c := &Chart{Name: "bandwidth-wire", Title: "Wire traffic on the " + link.FormatRate(slow) + " link, plain series",
		XLabel: "time across the run's points (s)", YLabel: "wire MiB/s", LegendRight: true,
		Lines:  []ChartLine{{Label: "server → client", Points: down, Color: 0}, {Label: "client → server", Points: up, Color: 1}},
		VLines: vlines,
		Caption: "Per-second wire traffic (MiB/s = 2^20 bytes/s) of each " + link.FormatRate(slow) +
			" point in run order, separated by thin lines and labelled with its thread count; the dashed red line is the link's capacity."}
	if slow > 0 {
		capMiB := float64(slow) / 8 / mib
		c.HLines = []HLine{{Label: fmt.Sprintf("%s capacity (%.1f MiB/s)", link.FormatRate(slow), capMiB), Y: capMiB}}
		ymax = math.Max(ymax, capMiB)
	}
	for i := range marks {
		marks[i].Y = ymax * 1.04
	}
	c.Marks = marks
	return c
}
