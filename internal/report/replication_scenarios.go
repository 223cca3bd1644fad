package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/stats"
)

func fmtX(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

// lagVsRTT is DTLE's scenario 1: highest lag during the run as the RTT grows.
func lagVsRTT(s *scenario) []Block {
	t := Table{Caption: "Highest replication lag during the run (p99 in brackets), by RTT", Header: []string{"RTT ms"}}
	c := &Chart{Name: "replication-lag-rtt", Title: "Replication lag vs RTT", XLabel: "round-trip time (ms)",
		YLabel: "highest lag (s)", Caption: "Highest lag seen during each run, one line per channel; failed points are left out."}
	for i, ch := range s.channels {
		t.Header = append(t.Header, ch)
		c.Lines = append(c.Lines, ChartLine{Label: ch, Color: i})
	}
	t.Numeric = numericCols(len(t.Header))
	var findings []string
	worst := map[string]float64{}
	for _, x := range s.xs {
		row := []string{fmtX(x)}
		for i, ch := range s.channels {
			cell := s.at(ch, x)
			lag, ok := cell.mean(lagMax)
			if cell.failed() || !ok {
				row = append(row, cell.why())
				continue
			}
			txt := fmt.Sprintf("%s s", num(lag))
			if p99, ok := cell.mean(lagP99); ok {
				txt += fmt.Sprintf(" (%s)", num(p99))
			}
			if !cell.bounded() {
				txt += " grows"
			}
			row = append(row, txt)
			c.Lines[i].Points = append(c.Lines[i].Points, XY{x, lag})
			worst[ch] = max(worst[ch], lag)
		}
		t.Rows = append(t.Rows, row)
	}
	for _, ch := range s.channels {
		if w, ok := worst[ch]; ok {
			findings = append(findings, fmt.Sprintf("%s: lag stays under %s s at every RTT up to %s ms.", ch, num(w), fmtX(s.xs[len(s.xs)-1])))
		}
	}
	return []Block{Heading{3, "Lag vs RTT"}, t, c, List{findings}}
}

// maxLoad is DTLE's scenario 2: the highest load each channel carries with bounded lag,
// the bracket the search left around it, and the search's probes.
func maxLoad(s *scenario, pts []result.Point, logName string, m result.Margin) []Block {
	t := Table{Caption: "Highest target load with bounded lag and a matching checksum, the bracket the search left around it, and the load the passing probe achieved",
		Header: []string{"channel", "highest passing target QPS", "first failing target QPS", "bracket", "confirmed", "achieved QPS",
			logName + " Mbit/s", "wire Mbit/s", "÷ native"}}
	t.Numeric = numericCols(len(t.Header))
	c := &Chart{Name: "replication-max-load", Title: "Max sustainable load per channel", YLabel: "queries per second",
		Caption: "The load each channel sustained with bounded lag: the limit fitted to its probes where the search fitted one, else the load its highest passing probes delivered; the label is the ratio to native replication."}
	edges := result.MaxLoads(pts)
	var nat result.Edge
	for _, e := range edges {
		if e.Channel == "native" {
			nat = e
		}
	}
	native := nat.Sustained()
	grp := BarGroup{Label: "max QPS"}
	var findings []string
	for _, e := range edges {
		r, first, width, conf, got, bin, wire := "–", "–", "–", "no", "–", "–", "–"
		over := e.Over(nat)
		switch {
		case e.Channel == "native" && native > 0:
			r = "1.00× (reference)"
		case native > 0 && e.Sustained() > 0:
			r = overCell(over)
		}
		if e.FirstFailed > 0 {
			first = num(e.FirstFailed)
			if f := e.Failed; f != nil && !f.Usable() {
				first += " (" + pointWhy(*f) + ")"
			}
		}
		if w := e.Width(); w > 0 {
			width = fmt.Sprintf("+%.1f%%", 100*w)
		}
		if e.Passes >= 2 {
			conf = "yes"
		}
		if e.At != nil {
			got, bin, wire = num(achievedQPS(*e.At)), num(binlogMbit(*e.At)), num(wireMbit(*e.At))
		}
		t.Rows = append(t.Rows, []string{e.Channel, num(e.Limit), first, width, conf, got, bin, wire, r})
		c.Categories = append(c.Categories, e.Channel)
		grp.Values = append(grp.Values, e.Sustained())
		grp.Texts = append(grp.Texts, fmt.Sprintf("%s QPS (%s)", num(e.Sustained()), ratio(e.Sustained(), native)))
		if e.Channel != "native" && native > 0 && e.Sustained() > 0 {
			findings = append(findings, maxLoadFinding(e, nat, over, m.Stats()))
		}
	}
	c.Bars = []BarGroup{grp}
	return []Block{Heading{3, "Max sustainable load"}, t, c, searchChart(s), List{findings}}
}

// overCell is a limit ratio with the range the two brackets allow: "1.96× (1.60–2.40)".
func overCell(r stats.RatioCI) string {
	if !r.Known {
		return fmt.Sprintf("%.2f× (range unknown)", r.Ratio)
	}
	return fmt.Sprintf("%.2f× (%.2f–%.2f)", r.Ratio, r.Lo, r.Hi)
}

// maxLoadFinding says how a channel's limit compares with native's, read from the range
// the two brackets allow (each true limit lies between the highest passing and the
// lowest failing load): more or less load when the whole range lies above or below 1, no
// measurable difference within margin m, and too short to tell otherwise.
func maxLoadFinding(e, nat result.Edge, over stats.RatioCI, m stats.Margin) string {
	cite := fmt.Sprintf("%s vs %s QPS, ratio %s", num(e.Sustained()), num(nat.Sustained()), overCell(over))
	switch v := stats.Decide(over.Lo, over.Hi, m); {
	case !over.Known:
		return fmt.Sprintf("%s against native replication is %s: a search did not bracket its limit (%s).", e.Channel, tooShort, cite)
	case v == stats.NoDifference:
		return fmt.Sprintf("%s and native replication sustain loads with no measurable difference (%s).", e.Channel, cite)
	case v == stats.TooShort:
		return fmt.Sprintf("%s against native replication is %s: the brackets allow either more or less load (%s); a finer --precision would decide.", e.Channel, tooShort, cite)
	}
	return fmt.Sprintf("%s sustains %s the load of native replication (%s).", e.Channel, ratio(e.Sustained(), nat.Sustained()), cite)
}

// searchChart draws each channel's search: the target load of every probe in the order
// they ran, "+" where the probe passed and "x" where it failed.
func searchChart(s *scenario) *Chart {
	c := &Chart{Name: "replication-max-load-search", Title: "The max-load search, probe by probe", XLabel: "probe",
		YLabel: "target load (QPS)", Caption: "Each channel's probes in the order they ran: + passed (bounded lag, checksum equal), x failed. Once a probe fails above a passing one, each next probe goes to the limit fitted to all of them so far; the search stops when that limit's 95% interval is within --precision or after its edge probes."}
	for i, ch := range s.channels {
		l := ChartLine{Label: ch, Color: i}
		n := 0
		for _, x := range s.order[ch] {
			n++
			l.Points = append(l.Points, XY{float64(n), loadOf(x)})
			mark := "x"
			if x.SustainsLoad() {
				mark = "+"
			}
			c.Marks = append(c.Marks, ChartMark{X: float64(n), Y: loadOf(x), Text: mark})
		}
		c.Lines = append(c.Lines, l)
	}
	return c
}

// repBandwidth is DTLE's scenario 3: wire bandwidth each channel uses for the same load.
func repBandwidth(s *scenario, pts []result.Point, m result.Margin) []Block {
	t := Table{Caption: "Wire Mbit/s by load; ÷ native compares each channel's wire bytes per query with native replication's at the same load", Header: []string{"load QPS"}}
	c := &Chart{Name: "replication-bandwidth", Title: "Wire bandwidth vs load", XLabel: "load (queries per second)",
		YLabel: "wire Mbit/s", Caption: "Wire bandwidth each channel used to replicate the same load."}
	for i, ch := range s.channels {
		t.Header = append(t.Header, ch)
		if ch != "native" && s.cells["native"] != nil {
			t.Header = append(t.Header, ch+" ÷ native")
		}
		c.Lines = append(c.Lines, ChartLine{Label: ch, Color: i})
	}
	t.Numeric = numericCols(len(t.Header))
	wr := map[string]map[float64]comparison{}
	for _, w := range result.WireVsNative(pts, m.Stats()) {
		if wr[w.Channel] == nil {
			wr[w.Channel] = map[float64]comparison{}
		}
		wr[w.Channel][w.Load] = comparison{w.Ratio, "B/query", w.LoadS, false}
	}
	for _, x := range s.xs {
		row := []string{fmtX(x)}
		for i, ch := range s.channels {
			cell := s.at(ch, x)
			v, ok := cell.mean(wireMbit)
			txt := cell.why()
			if ok {
				txt = num(v)
				c.Lines[i].Points = append(c.Lines[i].Points, XY{x, v})
			}
			row = append(row, txt)
			if ch == "native" || s.cells["native"] == nil {
				continue
			}
			r := "–"
			if w, ok := wr[ch][x]; ok {
				r = w.cell()
			}
			row = append(row, r)
		}
		t.Rows = append(t.Rows, row)
	}
	var findings []string
	for _, ch := range s.channels {
		if f := wireFinding(ch, s.xs, wr[ch]); f != "" {
			findings = append(findings, f)
		}
	}
	return []Block{Heading{3, "Bandwidth used vs load"}, t, c, List{findings}}
}

// wireFinding says how a channel's wire bytes compare with native's over the loads both
// measured: the range of the ratios, then the verdict at each load, "less" only where the
// whole interval lies below 1.
func wireFinding(ch string, loads []float64, at map[float64]comparison) string {
	var lo, hi float64
	byVerdict := map[stats.Verdict][]string{}
	var why []string
	n := 0
	for _, x := range loads {
		w, ok := at[x]
		if !ok {
			continue
		}
		if n == 0 || w.Ratio < lo {
			lo = w.Ratio
		}
		hi, n = max(hi, w.Ratio), n+1
		byVerdict[w.Verdict] = append(byVerdict[w.Verdict], fmtX(x))
		if d := w.toDecide(); d != "" && !contains(why, d) {
			why = append(why, d)
		}
	}
	if n == 0 {
		return ""
	}
	f := fmt.Sprintf("%s uses %s the wire bytes per query of native replication at the same load", ch, span(lo, hi))
	var parts []string
	for _, v := range []struct {
		v    stats.Verdict
		word string
	}{{stats.Lower, "less"}, {stats.Higher, "more"}, {stats.NoDifference, "no measurable difference"}, {stats.TooShort, tooShort}} {
		if qs := byVerdict[v.v]; len(qs) > 0 {
			parts = append(parts, fmt.Sprintf("%s at %s QPS", v.word, strings.Join(qs, ", ")))
		}
	}
	f += " (" + strings.Join(parts, "; ") + ")."
	if len(why) > 0 {
		f += " To tell: " + strings.Join(why, "; ") + "."
	}
	return f
}

// pointWhy is what a point that must not be used shows instead of numbers.
func pointWhy(p result.Point) string {
	if p.Failed {
		return "FAILED"
	}
	return "checksum mismatch"
}
