package report

import (
	"fmt"
	"strconv"
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
			lag, ok := cell.ex("lag_max_s")
			if cell.failed() || !ok {
				row = append(row, cell.why())
				continue
			}
			txt := fmt.Sprintf("%s s", num(lag))
			if p99, ok := cell.ex("lag_p99_s"); ok {
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

// maxLoad is DTLE's scenario 2: the highest load each channel carries with bounded lag.
func maxLoad(s *scenario) []Block {
	t := Table{Caption: "Highest load with bounded lag and a matching checksum", Header: []string{"channel", "max sustainable QPS",
		"binlog Mbit/s", "wire Mbit/s", "÷ native", "first failed or unbounded load (QPS)"}}
	t.Numeric = numericCols(len(t.Header))
	c := &Chart{Name: "replication-max-load", Title: "Max sustainable load per channel", YLabel: "queries per second",
		Caption: "Highest achieved QPS at which lag stayed bounded; the label is the ratio to native replication."}
	best := map[string]float64{}
	at := map[string]*repCell{}
	for _, ch := range s.channels {
		for _, x := range s.xs {
			cell := s.at(ch, x)
			if cell.failed() || !cell.bounded() {
				continue
			}
			q, ok := cell.ex("achieved_qps")
			if !ok {
				q = x
			}
			if q > best[ch] {
				best[ch], at[ch] = q, cell
			}
		}
	}
	grp := BarGroup{Label: "max QPS"}
	var findings []string
	native, nativeBin := best["native"], "–"
	for _, ch := range s.channels {
		first := "–"
		for _, x := range s.xs {
			if cell := s.at(ch, x); cell != nil && (cell.failed() || !cell.bounded()) {
				first = fmtX(x)
				if cell.failed() {
					first += " (" + cell.why() + ")"
				}
				break
			}
		}
		r := "–"
		if native > 0 {
			r = ratio(best[ch], native)
		}
		bin, wire := "–", "–"
		if cell := at[ch]; cell != nil {
			if v, ok := cell.ex("binlog_mbit_s"); ok {
				bin = num(v)
			}
			if v, ok := cell.ex("wire_mbit_s"); ok {
				wire = num(v)
			}
		}
		if ch == "native" {
			nativeBin = bin
		}
		t.Rows = append(t.Rows, []string{ch, num(best[ch]), bin, wire, r, first})
		c.Categories = append(c.Categories, ch)
		grp.Values = append(grp.Values, best[ch])
		grp.Texts = append(grp.Texts, fmt.Sprintf("%s QPS (%s)", num(best[ch]), r))
		if ch != "native" && native > 0 && best[ch] > 0 {
			findings = append(findings, fmt.Sprintf("%s sustains %s the load of native replication (%s vs %s QPS, binlog %s vs %s Mbit/s).",
				ch, ratio(best[ch], native), num(best[ch]), num(native), bin, nativeBin))
		}
	}
	c.Bars = []BarGroup{grp}
	return []Block{Heading{3, "Max sustainable load"}, t, c, List{findings}}
}

// repBandwidth is DTLE's scenario 3: wire bandwidth each channel uses for the same load.
func repBandwidth(s *scenario) []Block {
	t := Table{Caption: "Wire Mbit/s by load; ÷ native compares each channel with native replication at the same load", Header: []string{"load QPS"}}
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
	lo, hi := map[string]float64{}, map[string]float64{}
	for _, x := range s.xs {
		row := []string{fmtX(x)}
		nat, natOK := s.at("native", x).ex("wire_mbit_s")
		for i, ch := range s.channels {
			cell := s.at(ch, x)
			v, ok := cell.ex("wire_mbit_s")
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
			if ok && natOK && nat > 0 {
				r = ratio(v, nat)
				q := v / nat
				if _, seen := lo[ch]; !seen || q < lo[ch] {
					lo[ch] = q
				}
				hi[ch] = max(hi[ch], q)
			}
			row = append(row, r)
		}
		t.Rows = append(t.Rows, row)
	}
	var findings []string
	for _, ch := range s.channels {
		if _, ok := lo[ch]; ok {
			findings = append(findings, fmt.Sprintf("%s uses %s the wire bandwidth of native replication for the same load.", ch, span(lo[ch], hi[ch])))
		}
	}
	return []Block{Heading{3, "Bandwidth used vs load"}, t, c, List{findings}}
}
