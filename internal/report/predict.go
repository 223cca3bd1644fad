package report

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/model"
	"github.com/wirelab/wirelab/internal/result"
)

// Prediction asks the model for a study-shaped table: each fit at each link, rows threads.
type Prediction struct {
	Fits    []*model.Fit
	Links   []model.Link  // one column group each; Shaped is the same for all
	Machine model.Machine // zero: each fit's lab machine (its cores shared)
	Threads []int
	Chart   string // file stem of the TPS chart; "" for none
}

// machineFor is the machine a fit is predicted on.
func (q Prediction) machineFor(f *model.Fit) model.Machine {
	if q.Machine == (model.Machine{}) {
		return f.Measured()
	}
	return q.Machine
}

// PredictionBlocks draws q: per fit, where its profile came from and how far the model is
// off on those points, then a table with TPS, mean latency and bottleneck per link (one
// table of all fits when there is a single thread count), and a TPS chart.
func PredictionBlocks(q Prediction) ([]Block, error) {
	var bs []Block
	chart := &Chart{Name: q.Chart, Title: "Predicted throughput vs client threads", XLabel: "client threads (log2)",
		YLabel: "predicted transactions per second", Log2X: spansLog(q.Threads),
		Caption: "Exact MVA of each profile on each link; where a line flattens, the table names the saturated station."}
	single := Table{Caption: "Predicted at " + threadsN(firstOr(q.Threads)), Header: []string{"profile"}}
	for _, l := range q.Links {
		single.Header = append(single.Header, linkName(l)+" TPS", "latency ms", "bottleneck")
	}
	single.Numeric = predNumeric(len(single.Header))
	for i, f := range q.Fits {
		checks, err := f.Check()
		if err != nil {
			return nil, err
		}
		bs = append(bs, Paragraph{profileText(f, checks)})
		t := Table{Caption: fmt.Sprintf("Profile %s on %s", f.Label, q.machineFor(f)), Header: []string{"threads"}}
		for _, l := range q.Links {
			t.Header = append(t.Header, linkName(l)+" TPS", "latency ms", "bottleneck")
		}
		t.Numeric = predNumeric(len(t.Header))
		rows := make([][]string, len(q.Threads))
		for r, n := range q.Threads {
			rows[r] = []string{strconv.Itoa(n)}
		}
		srow := []string{f.Label}
		for j, l := range q.Links {
			ps, err := f.Predict(l, q.machineFor(f), q.Threads)
			if err != nil {
				return nil, err
			}
			line := ChartLine{Label: f.Label + " @ " + linkName(l), Color: j, Dashed: i > 0}
			for r, p := range ps {
				cells := []string{num(p.TPS), num(p.LatAvgMs), bottleneckText(p)}
				rows[r] = append(rows[r], cells...)
				line.Points = append(line.Points, XY{float64(p.Threads), p.TPS})
				if r == 0 {
					srow = append(srow, cells...)
				}
			}
			chart.Lines = append(chart.Lines, line)
		}
		t.Rows = rows
		single.Rows = append(single.Rows, srow)
		if len(q.Threads) > 1 {
			bs = append(bs, t)
		}
	}
	if len(q.Threads) == 1 {
		bs = append(bs, single)
	}
	if q.Chart != "" && len(q.Threads) > 1 {
		bs = append(bs, chart)
	}
	return bs, nil
}

// profileText says where a fit came from, what a transaction costs and the model's error
// on the fit's own points.
func profileText(f *model.Fit, checks []model.CheckPoint) string {
	med, worst := model.ErrorSummary(checks)
	var w model.CheckPoint
	for _, c := range checks {
		if abs(c.Err) >= abs(w.Err) {
			w = c
		}
	}
	lo, hi := f.CPURange()
	cpu := fmt.Sprintf("%s ms", num(lo*1000))
	if hi-lo > 0.05*hi {
		cpu = fmt.Sprintf("%s to %s ms", num(lo*1000), num(hi*1000))
	}
	return fmt.Sprintf("Profile %s: %s of series %s. Per transaction %s KB up, %s KB down, %s round trips, "+
		"CPU %s (%s, kernel included); each round trip costs %s ms beyond the RTT (calibrated at low load). "+
		"On those points the model is off by %s (median), %s at worst (%s, %s).",
		f.Label, pointsN(len(f.Points)), strings.Join(f.Series, ", "), num(f.WireBytesUp/1000), num(f.WireBytesDown/1000), num(f.RoundTrips),
		cpu, measuredOn(f), strconv.FormatFloat(f.PerRoundTripS*1000, 'f', 3, 64), pct(med), pct(worst), w.Series, threadsN(w.Threads)) +
		labBoundText(f.Points)
}

// measuredOn says whose cores a profile's CPU was measured on.
func measuredOn(f *model.Fit) string {
	if m := f.Measured(); m.SharedCores == 0 {
		return fmt.Sprintf("a server host of %d cores and a client host of %d; the machine figure is the server host's", m.ServerCores, m.ClientCores)
	}
	return fmt.Sprintf("the machine's %d cores", f.Cores)
}

// labBoundText flags a profile's lab-bound points (see result.LabCost): " " + a sentence,
// or "" when there are none.
func labBoundText(pts []result.Point) string {
	var ids []string
	for _, p := range pts {
		if p.LabCost != nil && p.LabCost.LabBound {
			ids = append(ids, fmt.Sprintf("%s at %s (%.0f%%)", p.Series, threadsN(p.Threads), 100*p.LabCost.MachineShare))
		}
	}
	if len(ids) == 0 {
		return ""
	}
	return fmt.Sprintf(" Lab-bound: the lab's delay line took more than %.0f%% of the machine on %s; its CPU is left out "+
		"of the profile, so the model predicts what the workload does without the lab's cost: more than was measured there.",
		100*result.LabBoundShare, strings.Join(ids, ", "))
}

func pointsN(n int) string {
	if n == 1 {
		return "1 point"
	}
	return strconv.Itoa(n) + " points"
}

func bottleneckText(p model.Prediction) string {
	if p.Bottleneck == model.StationRoundTrips {
		return "latency"
	}
	return fmt.Sprintf("%s %s", p.Bottleneck, pct(p.Util))
}

// linkName is "1gbit", "1gbit 40ms", "unlimited 0.15ms".
func linkName(l model.Link) string {
	s := link.FormatRate(l.RateBps)
	if l.RTT > 0 {
		s += " " + strconv.FormatFloat(float64(l.RTT)/1e6, 'f', -1, 64) + "ms"
	}
	return s
}

func predNumeric(n int) []bool {
	b := numericCols(n)
	for i := 3; i < n; i += 3 {
		b[i] = false // bottleneck columns
	}
	return b
}

func firstOr(ts []int) int {
	if len(ts) == 0 {
		return 0
	}
	return ts[0]
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// WriteCharts renders every chart among blocks into dir as NAME.png and NAME.svg and
// returns the names of the files written.
func WriteCharts(dir string, blocks []Block) ([]string, error) {
	var out []string
	for _, b := range blocks {
		if c, ok := b.(*Chart); ok {
			if _, err := writeChart(dir, c); err != nil {
				return out, err
			}
			out = append(out, c.Name+".png", c.Name+".svg")
		}
	}
	return out, nil
}

// writeChart renders c into dir as NAME.png and NAME.svg and returns the PNG bytes.
func writeChart(dir string, c *Chart) ([]byte, error) {
	png, svg, err := c.render()
	if err != nil {
		return nil, fmt.Errorf("chart %s: %w", c.Name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, c.Name+".png"), png, 0o644); err != nil {
		return nil, fmt.Errorf("write chart: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, c.Name+".svg"), svg, 0o644); err != nil {
		return nil, fmt.Errorf("write chart: %w", err)
	}
	return png, nil
}
