package result

import (
	"strings"
	"testing"
)

// replayPoint is a replay point of series at one-way delay ms with its statements' time
// per kind and its shapes' times.
func replayPoint(series string, delayMs float64, wire int64, txnP50 float64, shapes map[string]float64) Point {
	r := &ReplayStats{Speed: "max", TxnLatP50Ms: txnP50, WireBytesUp: wire / 4, WireBytesDown: wire - wire/4}
	var total float64
	for s, ms := range shapes {
		r.Shapes = append(r.Shapes, ReplayShape{Shape: s, Kind: "select", Count: 10, TimeMs: ms})
		total += ms
	}
	r.Kinds = []ReplayKind{{Kind: "select", TimeMs: total}}
	return Point{Study: "replay", Series: series, LinkDelayMs: delayMs, Replay: r}
}

func TestShapeCosts(t *testing.T) {
	fast := replayPoint("plain", 0, 1000, 3, map[string]float64{"a": 10, "b": 5, "c": 1, "only-fast": 50})
	slow := replayPoint("plain", 10, 1000, 400, map[string]float64{"a": 410, "b": 205, "c": 1, "only-slow": 900})
	pts := []Point{slow, fast, replayPoint("compression", 0, 500, 9, nil)}
	f, s, ok := ReplaySpan(pts, "plain")
	if !ok || f.LinkDelayMs != 0 || s.LinkDelayMs != 10 {
		t.Fatalf("span: %v %v %v", f.LinkDelayMs, s.LinkDelayMs, ok)
	}
	cs := ShapeCosts(f, s)
	if len(cs) != 3 || cs[0].Shape != "a" || cs[0].CostMs != 400 || cs[1].Shape != "b" || cs[1].CostMs != 200 || cs[2].CostMs != 0 {
		t.Fatalf("costs %+v: want a, b, c (a shape kept at one point only is left out)", cs)
	}
	if d := cs[0].Share - 400.0/600; d > 1e-9 || d < -1e-9 {
		t.Errorf("a's share %g, want 2/3", cs[0].Share)
	}
	if _, _, ok := ReplaySpan(pts, "compression"); ok {
		t.Error("a span of one point")
	}
	failed := slow
	failed.Failed = true
	if _, _, ok := ReplaySpan([]Point{fast, failed}, "plain"); ok {
		t.Error("a failed point counts")
	}
}

func TestSeriesDeltas(t *testing.T) {
	pts := []Point{replayPoint("plain", 0, 1000, 3, nil), replayPoint("compression", 0, 400, 9, nil),
		replayPoint("plain", 10, 1000, 400, nil), replayPoint("compression", 10, 600, 390, nil), replayPoint("tls", 10, 1100, 405, nil)}
	ds := SeriesDeltas(pts, "compression", "plain")
	if len(ds) != 2 || ds[0].DelayMs != 0 || ds[1].DelayMs != 10 {
		t.Fatalf("deltas %+v", ds)
	}
	if d := ds[1]; d.BytesSaved < 0.3999 || d.BytesSaved > 0.4001 || d.DeltaMs != -10 || d.TxnP50Ms != 390 || d.BaseTxnP50Ms != 400 {
		t.Errorf("at 10 ms: %+v", d)
	}
	if ds := SeriesDeltas(pts, "tls", "plain"); len(ds) != 1 || ds[0].BytesSaved > -0.0999 || ds[0].DeltaMs != 5 {
		t.Errorf("tls: %+v", ds)
	}
	if p, ok := ReplayAt(pts, "tls", 0, 10); !ok || p.Series != "tls" {
		t.Errorf("ReplayAt: %v", ok)
	}
	if s := strings.Join(ReplaySeries(pts), ","); s != "plain,compression,tls" {
		t.Errorf("series %s", s)
	}
}

func TestNoProfileWhyOfAReplay(t *testing.T) {
	p := replayPoint("plain", 0, 1000, 3, nil)
	p.TPS = 5
	why, rerun := NoProfileWhy(&Run{Schema: Schema}, []Point{p})
	if rerun || !strings.Contains(why, "a replay's sessions are not a fixed number of clients") {
		t.Errorf("%q %v", why, rerun)
	}
}
