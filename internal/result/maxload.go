package result

import (
	"math"
	"sort"

	"github.com/wirelab/wirelab/internal/stats"
)

// Probe is one probe of a max-load search: the target load, the load it delivered, and
// whether it passed (usable, bounded lag, matching checksum).
type Probe struct {
	Load float64
	// Delivered is the load the source applied over the probe (sysbench's QPS; 0 = not
	// known). sysbench's --rate draws each transaction's start from exponential gaps, so a
	// probe's count of transactions is random around its target: ±1/√(transactions), about
	// 2% for a 20 s probe at 700 QPS.
	Delivered float64
	OK        bool
}

// at is the load a probe's outcome is charged to: what it delivered where that is known.
func (p Probe) at() float64 {
	if p.Delivered > 0 {
		return p.Delivered
	}
	return p.Load
}

// Bracket is where a max-load search stands: Lo is the highest load that passed every
// time it was probed and lies below every failing load (0 = none), Hi the lowest load
// that failed (0 = none). A load probed twice counts as passing only if both passed, so a
// failed confirmation moves the limit down.
func Bracket(probes []Probe) (lo, hi float64) {
	failed := map[float64]bool{}
	for _, p := range probes {
		if !p.OK {
			failed[p.Load] = true
			if hi == 0 || p.Load < hi {
				hi = p.Load
			}
		}
	}
	for _, p := range probes {
		if p.OK && !failed[p.Load] && (hi == 0 || p.Load < hi) && p.Load > lo {
			lo = p.Load
		}
	}
	return lo, hi
}

// FitLimit is the load at which a probe passes half the time, with its 95% interval,
// from every probe of one search (stats.FitThreshold): the one estimate of a channel's
// maximum sustainable load that the search steers by and the report shows. Each outcome
// is charged to the load the probe delivered, not its target, so the random count of
// transactions a paced probe gets does not scatter the fit. Not OK until a probe has
// failed above a passing one.
func FitLimit(probes []Probe) stats.Threshold {
	ts := make([]stats.Trial, 0, len(probes))
	for _, p := range probes {
		if x := p.at(); x > 0 {
			ts = append(ts, stats.Trial{X: x, Pass: p.OK})
		}
	}
	return stats.FitThreshold(ts)
}

// Edge is a channel's maximum sustainable load as found by the max-load search.
type Edge struct {
	Channel string `json:"channel"`
	// Limit is the highest probed target load (QPS) that passed every time and lies below
	// every failing one; FirstFailed the lowest failing load (0 = none found). Near the
	// limit one probe's outcome is noisy, so these are what was probed, not the estimate.
	Limit       float64 `json:"highest_passing_qps"`
	FirstFailed float64 `json:"first_failing_qps,omitempty"`
	// Est is the limit fitted to every probe's outcome (FitLimit): the load at which a probe
	// passes half the time, with its 95% interval [Lo, Hi]. 0 when no probe failed above a
	// passing one.
	Est float64 `json:"max_load_qps,omitempty"`
	Lo  float64 `json:"max_load_lo_qps,omitempty"`
	Hi  float64 `json:"max_load_hi_qps,omitempty"`
	// LinkQPS is the load the link can carry: its rate ÷ the wire bytes one query took at
	// the channel's passing probes. Set only where the link is the limit (the failing
	// probes ran the link full, bottleneck "network"); LinkDisagrees when Est and LinkQPS
	// are more than LinkTolerance apart.
	LinkQPS       float64 `json:"link_capacity_qps,omitempty"`
	LinkDisagrees bool    `json:"link_disagrees,omitempty"`
	// Passes is how many probes at Limit passed.
	Passes int `json:"passes_at_highest"`
	// Delivered is the least load a probe at Limit delivered (each of them passed), and
	// FailedDelivered the least a failing probe at FirstFailed delivered: the loads the
	// source really applied at the two brackets (0 = not known). A paced source's count
	// of transactions is random around its target, so a bracket's target may be a load no
	// probe ever applied.
	Delivered       float64 `json:"highest_passing_delivered_qps,omitempty"`
	FailedDelivered float64 `json:"first_failing_delivered_qps,omitempty"`
	// At is the last passing point at Limit, Failed the last point at FirstFailed.
	At     *Point `json:"-"`
	Failed *Point `json:"-"`
	Probes int    `json:"probes"`
}

// LinkTolerance is how far apart (relative to the link's figure) the searched limit and
// what the link can carry may lie before the edge is flagged: the wire bytes per query,
// the shaper's rate and the lag rule each carry a few percent.
const LinkTolerance = 0.20

// Sustained is the load every reader quotes as the channel's limit: the fitted threshold
// where the search fitted one (on the loads the probes delivered), else the load the
// probes at the highest passing target delivered, else (not known) that target.
func (e Edge) Sustained() float64 {
	switch {
	case e.Est > 0:
		return e.Est
	case e.Delivered > 0:
		return e.Delivered
	}
	return e.Limit
}

// failedAt is the load the first failing bracket applied: what its probes delivered where
// known, else its target.
func (e Edge) failedAt() float64 {
	if e.FailedDelivered > 0 {
		return e.FailedDelivered
	}
	return e.FirstFailed
}

// Width is the bracket's width relative to the limit (0 when not bracketed).
func (e Edge) Width() float64 {
	if e.Limit <= 0 || e.FirstFailed <= 0 {
		return 0
	}
	return (e.FirstFailed - e.Limit) / e.Limit
}

// MaxLoadSeries is the series of the replication study's max-load search.
const MaxLoadSeries = "max-load"

// MaxLoads is the maximum sustainable load of every channel from the max-load points of a
// run, in the points' channel order: the one computation the study's headlines and the
// report share.
func MaxLoads(points []Point) []Edge {
	byCh := map[string][]Point{}
	var order []string
	for _, p := range points {
		if p.Series != MaxLoadSeries || p.Replication == nil {
			continue
		}
		if _, ok := byCh[p.Channel]; !ok {
			order = append(order, p.Channel)
		}
		byCh[p.Channel] = append(byCh[p.Channel], p)
	}
	var out []Edge
	for _, ch := range order {
		pts := byCh[ch]
		var probes []Probe
		for _, p := range pts {
			probes = append(probes, Probe{Load: p.Replication.TargetQPS, Delivered: p.DeliveredQPS(), OK: p.SustainsLoad()})
		}
		e := Edge{Channel: ch, Probes: len(pts)}
		e.Limit, e.FirstFailed = Bracket(probes)
		if f := FitLimit(probes); f.OK {
			e.Est, e.Lo, e.Hi = f.Est, f.Lo, f.Hi
		}
		e.crossCheck(pts)
		for i := range pts {
			p := &pts[i]
			switch p.Replication.TargetQPS {
			case e.Limit:
				if p.SustainsLoad() {
					e.Passes++
					e.At = p
					e.Delivered = leastDelivered(e.Delivered, p)
				}
			case e.FirstFailed:
				if !p.SustainsLoad() {
					e.Failed = p
					e.FailedDelivered = leastDelivered(e.FailedDelivered, p)
				}
			}
		}
		out = append(out, e)
	}
	sort.SliceStable(out, func(i, j int) bool { return channelRank(out[i].Channel) < channelRank(out[j].Channel) })
	return out
}

// leastDelivered is the lower of least (0 = none yet) and the load p delivered, where p
// delivered a known load.
func leastDelivered(least float64, p *Point) float64 {
	d := p.DeliveredQPS()
	if d <= 0 || (least > 0 && least <= d) {
		return least
	}
	return d
}

// crossCheck sets LinkQPS where the link is the limit: at least half the probes whose lag
// grew name the network as their bottleneck.
func (e *Edge) crossCheck(pts []Point) {
	var passing []Point
	failed, network := 0, 0
	for _, p := range pts {
		switch {
		case p.SustainsLoad():
			passing = append(passing, p)
		case p.Usable() && p.Replication != nil: // unbounded lag, not a spoilt point
			failed++
			if p.Bottleneck == "network" {
				network++
			}
		}
	}
	if failed == 0 || 2*network < failed || len(passing) == 0 {
		return
	}
	e.LinkQPS = LinkCapacityQPS(passing, float64(passing[0].LinkRateBps))
	if e.LinkQPS > 0 && e.Est > 0 {
		e.LinkDisagrees = math.Abs(e.Est/e.LinkQPS-1) > LinkTolerance
	}
}

// LinkCapacityQPS is the load (QPS) a link of rateBps carries at the wire bytes per query
// the points took: the link's bytes per second ÷ (source → replica wire bytes, load and
// catch-up, over the queries the points ran). 0 without a rate cap or without bytes.
func LinkCapacityQPS(pts []Point, rateBps float64) float64 {
	var wire, queries float64
	for _, p := range pts {
		if p.Replication == nil || p.Replication.WireDownBytesTotal <= 0 || p.QPS <= 0 {
			continue
		}
		wire += float64(p.Replication.WireDownBytesTotal)
		queries += p.QPS * p.Replication.LoadS
	}
	if rateBps <= 0 || wire <= 0 || queries <= 0 {
		return 0
	}
	return rateBps / 8 / (wire / queries)
}

// SustainsLoad is true for a usable replication point whose lag stayed bounded.
func (p Point) SustainsLoad() bool {
	return p.Usable() && p.Replication != nil && p.Replication.Bounded
}

// DeliveredQPS is the load a max-load probe applied: sysbench's QPS over the load window,
// or 0 when the point failed to run (its count of queries then says nothing about the
// load), so the probe is charged to its target.
func (p Point) DeliveredQPS() float64 {
	if p.Failed {
		return 0
	}
	return p.QPS
}

// ReplicationChannels are the replication study's channels in the order reports show them.
var ReplicationChannels = []string{"native", "native-compressed", "tunnel"}

func channelRank(ch string) int {
	for i, c := range ReplicationChannels {
		if c == ch {
			return i
		}
	}
	return len(ReplicationChannels)
}

// Over is e's limit ÷ base's with its range. Where both limits were fitted, it is the
// ratio of the fits with a 95% interval on its log: each side's half-width the two fits'
// log half-widths on that side added in quadrature (the searches are independent).
// Otherwise the ratio of the sustained loads with the range the two brackets allow: from
// e's sustained load over the load base's first failing probe applied to the load e's
// first failing probe applied over base's sustained load (delivered loads where known,
// else targets). A paced probe's delivered load scatters around its target, so a passing
// probe can have applied more than a failing one above it; the range then still holds the
// ratio. The range is Known only when both searches bracketed their limit.
func (e Edge) Over(base Edge) stats.RatioCI {
	if e.Est > 0 && base.Est > 0 {
		r := e.Est / base.Est
		down := math.Hypot(math.Log(e.Est/e.Lo), math.Log(base.Hi/base.Est))
		up := math.Hypot(math.Log(e.Hi/e.Est), math.Log(base.Est/base.Lo))
		return stats.RatioCI{Ratio: r, Lo: r * math.Exp(-down), Hi: r * math.Exp(up), Known: true}
	}
	if base.Limit <= 0 {
		return stats.RatioCI{Ratio: math.NaN()}
	}
	x := e.Sustained() / base.Sustained()
	r := stats.RatioCI{Ratio: x, Lo: x, Hi: x}
	if e.FirstFailed > 0 && base.FirstFailed > 0 {
		lo, hi := e.Sustained()/base.failedAt(), e.failedAt()/base.Sustained()
		r.Lo, r.Hi, r.Known = min(lo, hi, x), max(lo, hi, x), true
	}
	return r
}

// WireRatio is a channel's wire bytes per query ÷ native's at one load of the replication
// study's bandwidth scenario: each side's bytes over the queries it ran in its load
// window, by batches of seconds (the interval on the log of the ratio).
type WireRatio struct {
	Channel string
	Load    float64
	LoadS   float64 // the load window's length, seconds
	Ratio   stats.Comparison
}

// BandwidthSeries is the series of the replication study's bandwidth scenario.
const BandwidthSeries = "bandwidth"

// WireVsNative is every channel's wire bytes per query ÷ native's at each load of the
// bandwidth scenario that both measured and whose points count: the one computation the
// headlines and the report share. Per query rather than per second: the two points ran
// the same target rate, but each second's arrivals vary (9-15% at 300 QPS), and a mean of
// the bytes alone carries that into the ratio; the bytes for the work done do not. Each
// ratio's verdict is read within margin m.
func WireVsNative(points []Point, m stats.Margin) []WireRatio {
	native := map[float64]Point{}
	for _, p := range points {
		if p.Series == BandwidthSeries && p.Channel == "native" && p.Usable() && p.Replication != nil && p.WireBytesPerSDown > 0 {
			native[p.Replication.TargetQPS] = p
		}
	}
	var out []WireRatio
	for _, p := range points {
		if p.Series != BandwidthSeries || p.Channel == "native" || !p.Usable() || p.Replication == nil {
			continue
		}
		n, ok := native[p.Replication.TargetQPS]
		if !ok {
			continue
		}
		out = append(out, WireRatio{Channel: p.Channel, Load: p.Replication.TargetQPS, LoadS: p.Replication.LoadS,
			Ratio: stats.Compare(n.wirePerQuery(), p.wirePerQuery(), m)})
	}
	return out
}

// wirePerQuery is the source -> replica wire bytes per query over the load window as an
// estimate: from the per-second series where the point has one, else the point's means
// alone (which no comparison will treat as exact).
func (p Point) wirePerQuery() stats.Estimate {
	var bytes, queries []float64
	for _, s := range p.Seconds {
		if !s.Warmup && p.Replication != nil && s.T <= p.Replication.LoadS+0.5 {
			bytes, queries = append(bytes, s.WireDownBps), append(queries, s.QPS)
		}
	}
	// The load generator reports whole seconds only: the wire's last second of a 15 s
	// window often has no query count beside it. Its bytes would count against no
	// queries, and the batch holding it read up to twice the others.
	for len(queries) > 0 && queries[len(queries)-1] <= 0 {
		bytes, queries = bytes[:len(bytes)-1], queries[:len(queries)-1]
	}
	if len(bytes) == 0 {
		if p.QPS <= 0 {
			return stats.Estimate{}
		}
		return stats.Single(p.WireBytesPerSDown / p.QPS)
	}
	// Bytes and queries are counted: each second's reading is a whole number.
	return stats.SeriesRatio(bytes, queries, 1, 1)
}
