package report

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/result"
)

// bandwidthSection reproduces Percona's 2019 "network bandwidth" post: N1 slow vs fast
// link, N2 protocol compression, N3 TLS, each as threads × series TPS tables and charts,
// plus the slow link's wire traffic over time. Series are classified from each point's
// LinkRateBps, Compression and TLS fields, never from the series name.
type bandwidthSection struct{}

func (bandwidthSection) Study() string { return "bandwidth" }

type variant int

const (
	plain variant = iota
	compressed
	encrypted
	compressedEncrypted
	// tunneled: through wirelab's tunnel, N2's compressed channel on an engine without
	// protocol compression (PostgreSQL).
	tunneled
)

func variantOf(p result.Point) variant {
	switch {
	case p.Channel == "tunnel" && !p.Compression && !p.TLS:
		return tunneled
	case p.Compression && p.TLS:
		return compressedEncrypted
	case p.Compression:
		return compressed
	case p.TLS:
		return encrypted
	}
	return plain
}

var variantSuffix = map[variant]string{plain: "", compressed: "+compression", encrypted: "+tls", compressedEncrypted: "+compression+tls", tunneled: "+tunnel"}

// bwKey is one series of the study: a link rate and what runs over it.
type bwKey struct {
	rate int64
	v    variant
}

func (k bwKey) label() string { return link.FormatRate(k.rate) + variantSuffix[k.v] }

// bwStudy is the classified points: links slowest first (unlimited last) and the grid.
type bwStudy struct {
	pts    []result.Point
	links  []int64
	g      *grid[bwKey]
	margin result.Margin
}

func newBWStudy(pts []result.Point, m result.Margin) *bwStudy {
	s := &bwStudy{pts: pts, margin: m,
		g: newGrid(pts, func(p result.Point) bwKey { return bwKey{p.LinkRateBps, variantOf(p)} }, m.Stats())}
	seen := map[int64]bool{}
	for _, p := range pts {
		if !seen[p.LinkRateBps] {
			seen[p.LinkRateBps] = true
			s.links = append(s.links, p.LinkRateBps)
		}
	}
	sort.Slice(s.links, func(i, j int) bool { return slower(s.links[i], s.links[j]) })
	return s
}

// slower orders rates with 0 (unlimited) as the fastest.
func slower(a, b int64) bool {
	if a == 0 || b == 0 {
		return b == 0 && a != 0
	}
	return a < b
}

func (s *bwStudy) has(k bwKey) bool { return len(s.g.cells[k]) > 0 }

// role is the stable name of a link in chart file names: slow, fast, or link2, link3...
func (s *bwStudy) role(rate int64) string {
	i := sort.Search(len(s.links), func(i int) bool { return !slower(s.links[i], rate) })
	switch {
	case len(s.links) == 1 && rate == 0, len(s.links) > 1 && i == len(s.links)-1:
		return "fast"
	case i == 0:
		return "slow"
	}
	return "link" + strconv.Itoa(i+1)
}

func (bandwidthSection) Build(r *result.Run, pts []result.Point) ([]Block, error) {
	s := newBWStudy(pts, result.MarginOf(r))
	bs := []Block{Heading{2, "Bandwidth, compression and TLS"}, Paragraph{s.intro(r)}}
	bs = append(bs, Heading{3, "Findings"}, List{s.findings()})
	if len(s.links) > 1 {
		var keys []bwKey
		for _, l := range s.links {
			if s.has(bwKey{l, plain}) {
				keys = append(keys, bwKey{l, plain})
			}
		}
		if len(keys) > 1 {
			names := make([]string, len(keys))
			for i, k := range keys {
				names[i] = k.label()
			}
			title := "N1. Network bandwidth: " + joinVs(names)
			bs = append(bs, Heading{3, title}, s.table("TPS by threads; (bottleneck) per cell", keys, false),
				s.chart("bandwidth-n1", title, keys))
		}
	}
	if w := s.wireChart(); w != nil {
		bs = append(bs, Heading{3, "Wire traffic on the " + link.FormatRate(s.links[0]) + " link"}, w)
	}
	for _, exp := range []struct {
		n, what, name string
		v             variant
	}{{"N2", "Protocol compression", "n2", compressed}, {"N2", "Compression through wirelab's tunnel", "n2", tunneled},
		{"N3", "Network encryption (TLS)", "n3", encrypted}} {
		for i, l := range s.links {
			a, b := bwKey{l, plain}, bwKey{l, exp.v}
			if !s.has(a) || !s.has(b) {
				continue
			}
			title := fmt.Sprintf("%s. %s on %s", exp.n, exp.what, link.FormatRate(l))
			c := s.chart("bandwidth-"+exp.name+"-"+s.role(l), title, []bwKey{a, b})
			for j := range c.Lines {
				c.Lines[j].Color = i
			}
			bs = append(bs, Heading{3, title}, s.table("TPS by threads; (bottleneck) per cell; ratio = "+variantSuffix[exp.v][1:]+" ÷ plain", []bwKey{a, b}, true), c)
		}
	}
	return append(bs, Heading{3, "All bandwidth points"}, pointsTable("One row per point as measured; TPS CV is the spread of per-second TPS after warm-up", pts)), nil
}

func (s *bwStudy) intro(r *result.Run) string {
	links := make([]string, len(s.links))
	for i, l := range s.links {
		links[i] = link.FormatRate(l)
	}
	txt := fmt.Sprintf("Links %s; threads %s.", joinVs(links), threadsList(s.g.threads))
	if r.Spec.Repeat > 1 {
		txt += fmt.Sprintf(" Each cell is the mean of %d repeats ± the half-width of its 95%% confidence interval (Student's t).", r.Spec.Repeat)
	}
	if s.has(bwKey{s.links[0], compressedEncrypted}) {
		txt += " Series with both compression and TLS are listed with all points at the end."
	}
	txt += " Read the tables like the 2019 post's: rows are client threads, columns are series, values are transactions per second."
	return txt + " " + spreadNote(s.g.estimates(), s.margin)
}

// table is rows = threads, columns = keys' TPS cells; withRatio adds keys[1] ÷ keys[0].
func (s *bwStudy) table(caption string, keys []bwKey, withRatio bool) Table {
	t := Table{Caption: caption, Header: []string{"threads"}}
	for _, k := range keys {
		t.Header = append(t.Header, k.label())
	}
	if withRatio {
		t.Header = append(t.Header, variantSuffix[keys[1].v][1:]+" ÷ plain")
	}
	t.Numeric = numericCols(len(t.Header))
	for _, th := range s.g.threads {
		row := []string{strconv.Itoa(th)}
		for _, k := range keys {
			row = append(row, s.g.at(k, th).tpsCell())
		}
		if withRatio {
			r := "–"
			if ci, ok := tpsRatio(s.g.at(keys[0], th), s.g.at(keys[1], th)); ok {
				r = ci.cell()
			}
			row = append(row, r)
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

func (s *bwStudy) chart(name, title string, keys []bwKey) *Chart {
	c := &Chart{Name: name, Title: title, XLabel: "client threads (log2)", YLabel: "transactions per second",
		Log2X: spansLog(s.g.threads), Caption: "Mean TPS per thread count, one line per series; dashed lines are the variant (compression or TLS)."}
	for _, k := range keys {
		col := 0
		for i, l := range s.links {
			if l == k.rate {
				col = i
			}
		}
		c.Lines = append(c.Lines, ChartLine{Label: k.label(), Points: s.g.line(k), Color: col, Dashed: k.v != plain})
	}
	return c
}

func joinVs(xs []string) string {
	out := ""
	for i, x := range xs {
		if i > 0 {
			out += " vs "
		}
		out += x
	}
	return out
}
