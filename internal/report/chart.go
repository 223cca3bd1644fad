package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// XY is one point of a chart line.
type XY struct{ X, Y float64 }

type xy = XY

// Chart is a line chart (Lines) or a grouped bar chart (Categories + Bars). Name is the
// stable file stem: Render writes Name.png and Name.svg.
type Chart struct {
	Name, Title, XLabel, YLabel string
	Caption                     string // one sentence under the chart: what to look at
	Log2X                       bool   // thread counts: 1, 2, 4, ... evenly spaced
	LegendRight                 bool   // legend top-right instead of top-left

	Lines  []ChartLine
	HLines []HLine     // reference levels, e.g. the link capacity
	VLines []float64   // x positions of thin separators, e.g. where a new point starts
	Marks  []ChartMark // small text at a position, e.g. "16 thr" over a segment

	Categories []string // bar charts: one slot per category on the x axis
	Bars       []BarGroup
}

// ChartLine is one series; lines with the same Color index share a colour, Dashed tells
// variants (compression, TLS) of the same link apart.
type ChartLine struct {
	Label  string
	Points []XY
	Color  int
	Dashed bool
}

// HLine is a horizontal reference line with its legend label.
type HLine struct {
	Label string
	Y     float64
}

// ChartMark is a short text drawn at (X, Y) in data coordinates.
type ChartMark struct {
	X, Y float64
	Text string
}

// BarGroup is one bar per category; Texts (optional) are printed above the bars.
type BarGroup struct {
	Label  string
	Values []float64
	Texts  []string
	Color  int
}

const (
	chartW = 9 * vg.Inch
	chartH = 4.8 * vg.Inch
)

// render draws the chart as PNG and SVG bytes.
func (c *Chart) render() (png, svg []byte, err error) {
	p, err := c.plot()
	if err != nil {
		return nil, nil, err
	}
	out := make([][]byte, 2)
	for i, f := range []string{"png", "svg"} {
		w, err := p.WriterTo(chartW, chartH, f)
		if err != nil {
			return nil, nil, err
		}
		var b bytes.Buffer
		if _, err := w.WriteTo(&b); err != nil {
			return nil, nil, err
		}
		out[i] = b.Bytes()
	}
	return out[0], out[1], nil
}

func (c *Chart) plot() (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = c.Title
	p.Title.TextStyle.Font.Size = 15
	p.X.Label.Text, p.Y.Label.Text = c.XLabel, c.YLabel
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font.Size = 13
		a.Tick.Label.Font.Size = 11
	}
	p.Legend.TextStyle.Font.Size = 11
	p.Legend.Top, p.Legend.Left = true, !c.LegendRight
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(8), vg.Points(-6)
	if c.LegendRight {
		p.Legend.XOffs = vg.Points(-8)
	}
	sans(p)
	grid := plotter.NewGrid()
	if len(c.Bars) > 0 {
		grid.Vertical.Color = nil // categories, not values: no vertical rules
	}
	p.Add(grid)
	p.Y.Tick.Marker = plot.TickerFunc(plainTicks)
	var err error
	if len(c.Bars) > 0 {
		err = c.addBars(p)
	} else {
		err = c.addLines(p)
	}
	if err != nil {
		return nil, err
	}
	p.Y.Min = math.Min(0, p.Y.Min)
	if p.Y.Max <= p.Y.Min {
		p.Y.Max = p.Y.Min + 1
	}
	// Room above the data for the legend (one row per entry) and the marks under it.
	entries := len(c.Lines) + len(c.HLines)
	if len(c.Bars) > 1 {
		entries = len(c.Bars)
	}
	head := math.Min(0.08+0.07*float64(entries), 0.4)
	if len(c.Marks) > 0 {
		head = 0.35
	}
	p.Y.Max += (p.Y.Max - p.Y.Min) * head
	return p, nil
}

// sans sets every text of the plot in Liberation Sans: the serif default reads poorly at
// tick-label sizes.
func sans(p *plot.Plot) {
	for _, f := range []*font.Font{&p.Title.TextStyle.Font, &p.X.Label.TextStyle.Font, &p.Y.Label.TextStyle.Font,
		&p.X.Tick.Label.Font, &p.Y.Tick.Label.Font, &p.Legend.TextStyle.Font} {
		f.Variant = "Sans"
	}
}

func (c *Chart) addLines(p *plot.Plot) error {
	ymax := 0.0
	for _, l := range c.Lines {
		for _, pt := range l.Points {
			ymax = math.Max(ymax, pt.Y)
		}
	}
	for _, h := range c.HLines {
		ymax = math.Max(ymax, h.Y)
	}
	for _, l := range c.Lines {
		if len(l.Points) == 0 {
			continue
		}
		xys := make(plotter.XYs, len(l.Points))
		for i, pt := range l.Points {
			xys[i] = plotter.XY{X: pt.X, Y: pt.Y}
		}
		ln, pts, err := plotter.NewLinePoints(xys)
		if err != nil {
			return fmt.Errorf("line %s: %w", l.Label, err)
		}
		col := colour(l.Color)
		ln.Color, ln.Width = col, vg.Points(2)
		pts.Color, pts.Shape, pts.Radius = col, draw.CircleGlyph{}, vg.Points(2.5)
		if l.Dashed {
			ln.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
			pts.Shape = draw.BoxGlyph{}
		}
		if len(xys) > 30 { // per-second series: markers would only blur the line
			p.Add(ln)
			p.Legend.Add(l.Label, ln)
		} else {
			p.Add(ln, pts)
			p.Legend.Add(l.Label, ln, pts)
		}
	}
	for _, x := range c.VLines {
		v, _ := plotter.NewLine(plotter.XYs{{X: x, Y: 0}, {X: x, Y: ymax * 1.05}})
		v.Color, v.Width = color.Gray{Y: 190}, vg.Points(0.6)
		p.Add(v)
	}
	for i, h := range c.HLines {
		y := h.Y
		f := plotter.NewFunction(func(float64) float64 { return y })
		f.Color, f.Width = color.RGBA{R: 200, G: 30, B: 30, A: 255}, vg.Points(1.5)
		f.Dashes = []vg.Length{vg.Points(2 + float64(i)*2), vg.Points(3)}
		p.Add(f)
		p.Legend.Add(h.Label, f)
	}
	if len(c.Marks) > 0 {
		l := plotter.XYLabels{}
		for _, m := range c.Marks {
			l.XYs = append(l.XYs, plotter.XY{X: m.X, Y: m.Y})
			l.Labels = append(l.Labels, m.Text)
		}
		labels, err := plotter.NewLabels(l)
		if err != nil {
			return err
		}
		for i := range labels.TextStyle {
			labels.TextStyle[i].Font.Size = 9
			labels.TextStyle[i].Font.Variant = "Sans"
			labels.TextStyle[i].Color = color.Gray{Y: 90}
		}
		p.Add(labels)
	}
	if c.Log2X {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.TickerFunc(pow2Ticks)
		p.X.Min, p.X.Max = p.X.Min/1.25, p.X.Max*1.25
	}
	return nil
}

// plainTicks are gonum's default ticks with labels in their shortest form: "250", not "250.00".
func plainTicks(min, max float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(min, max)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = strconv.FormatFloat(ts[i].Value, 'f', -1, 64)
		}
	}
	return ts
}

// pow2Ticks labels every power of two in range: thread counts read as 1, 2, 4, 8, ...
func pow2Ticks(min, max float64) []plot.Tick {
	var ts []plot.Tick
	for v := 1.0; v <= max; v *= 2 {
		if v >= min {
			ts = append(ts, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', -1, 64)})
		}
	}
	return ts
}

func (c *Chart) addBars(p *plot.Plot) error {
	n := len(c.Bars)
	slot := (chartW - vg.Inch) / vg.Length(max(1, len(c.Categories)))
	w := min(0.7*slot/vg.Length(n), vg.Points(70))
	for i, g := range c.Bars {
		b, err := plotter.NewBarChart(plotter.Values(g.Values), w)
		if err != nil {
			return fmt.Errorf("bars %s: %w", g.Label, err)
		}
		b.Color = colour(g.Color)
		b.LineStyle.Width = 0
		b.Offset = vg.Length(float64(i)-float64(n-1)/2) * w
		p.Add(b)
		if n > 1 {
			p.Legend.Add(g.Label, b)
		}
		if len(g.Texts) == len(g.Values) {
			l := plotter.XYLabels{Labels: g.Texts}
			for j, v := range g.Values {
				l.XYs = append(l.XYs, plotter.XY{X: float64(j), Y: v})
			}
			labels, err := plotter.NewLabels(l)
			if err != nil {
				return err
			}
			for k := range labels.TextStyle {
				labels.TextStyle[k].Font.Size = 10
				labels.TextStyle[k].Font.Variant = "Sans"
				labels.TextStyle[k].XAlign = text.XCenter
				labels.TextStyle[k].YAlign = text.YBottom
			}
			labels.Offset = vg.Point{X: b.Offset, Y: vg.Points(3)}
			p.Add(labels)
		}
	}
	p.NominalX(c.Categories...)
	p.X.Min, p.X.Max = -0.5, float64(len(c.Categories))-0.5
	p.X.Tick.Label.Font.Size = 11
	return nil
}

// colour is the i-th of gonum's dark palette: the soft default washes out on white.
func colour(i int) color.Color { return plotutil.DarkColors[i%len(plotutil.DarkColors)] }
