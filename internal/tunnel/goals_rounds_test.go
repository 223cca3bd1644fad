package tunnel

import (
	"math"
	"strings"
	"testing"
)

// testdata/goal-rows.tsv is docs/bench/tunnel.md's latest goal tables as rows: part 6's
// 8 rounds of socat and tunnel mux on at 2 and 32 threads (2026-12-01 22:47-23:01) and
// part 3's two rounds of compression and the tunnel at 20 Mbit (23:44-23:51), neither
// with its per-second series.
func TestJudgeRealRows(t *testing.T) {
	rows, err := ReadRows("testdata/goal-rows.tsv")
	if err != nil {
		t.Fatal(err)
	}
	js, err := JudgeRows(rows)
	if err != nil {
		t.Fatal(err)
	}
	if len(js) != 2 || js[0].Goal != "over-socat" || js[1].Goal != "over-compression" {
		t.Fatalf("judgements %+v", js)
	}
	// Computed apart from this code (the t quantile 2.365 at 7 degrees of freedom on the
	// logs of the 8 rounds' tunnel ÷ socat): 2 threads 1.0293 (0.9668–1.0957), 32 threads
	// 1.2939 (1.1947–1.4013). The 2-thread interval includes 1.0: not shown, as the README's
	// hand-written "over socat" never said.
	want := []Case{
		{Name: "2 threads", Figure: 1.02926, Lo: 0.96685, Hi: 1.09570, Bounded: true, N: 8, Verdict: NotShown},
		{Name: "32 threads", Figure: 1.29389, Lo: 1.19469, Hi: 1.40133, Bounded: true, N: 8, Verdict: Met},
	}
	socat := js[0]
	if socat.Verdict != NotShown || len(socat.Cases) != 2 {
		t.Fatalf("over-socat %+v", socat)
	}
	for i, w := range want {
		g := socat.Cases[i]
		if g.Name != w.Name || g.N != w.N || g.Bounded != w.Bounded || g.Verdict != w.Verdict ||
			!near(g.Figure, w.Figure) || !near(g.Lo, w.Lo) || !near(g.Hi, w.Hi) || !strings.Contains(g.Basis, "8 paired rounds") {
			t.Errorf("case %d: %+v, want %+v", i, g, w)
		}
	}
	// Two rounds and no per-second series: the ratio (2.54×, 2.55×) without an interval.
	comp := js[1].Cases[0]
	if js[1].Verdict != NotShown || comp.Bounded || comp.N != 2 || !near(comp.Figure, math.Sqrt(272.2/107.3*274.1/107.3)) ||
		!strings.Contains(comp.Basis, "2 rounds without per-second series") {
		t.Errorf("over-compression %+v", js[1])
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 5e-5*math.Abs(b) }

// With fewer than 3 rounds the seconds decide: batch means of each side's per-second TPS,
// compared on the log scale with Welch's degrees of freedom.
func TestJudgeRoundsByBatchMeans(t *testing.T) {
	base := []float64{106, 109, 106, 106, 104, 106, 110, 108, 110, 108, 108, 108, 102, 110, 109, 108, 102, 102, 104, 106}
	tun := []float64{274, 272, 276, 267, 274, 275, 267, 286, 276, 282, 267, 266, 269, 271, 277, 274, 268, 264, 268, 282}
	js, err := JudgeRows([]Row{
		{Goal: "over-compression", Case: "20 Mbit", Side: SideBase, Name: "compression", Round: 1, TPS: 106.6, Seconds: base},
		{Goal: "over-compression", Case: "20 Mbit", Side: SideTunnel, Name: "tunnel", Round: 1, TPS: 272.75, Seconds: tun},
	})
	if err != nil {
		t.Fatal(err)
	}
	// Computed apart from this code: 10 batches of 2 s a side, 16 degrees of freedom,
	// 2.5586 (2.5142–2.6038): wholly above 2.5.
	c := js[0].Cases[0]
	if js[0].Verdict != Met || !c.Bounded || c.N != 10 || !near(c.Figure, 2.55863) || !near(c.Lo, 2.51423) || !near(c.Hi, 2.60382) ||
		c.Basis != "batch means of the per-second TPS, 10 batches a side" {
		t.Errorf("%+v", js[0])
	}

	// A second round at 2.4481 (2.3941–2.5035) straddles the goal: the span of the two
	// rounds' intervals does too, and the goal is not shown.
	base2 := []float64{103, 108, 110, 105, 103, 107, 108, 110, 103, 103, 109, 108, 112, 110, 107, 106, 115, 106, 105, 104}
	tun2 := []float64{263, 263, 259, 262, 264, 268, 271, 264, 248, 268, 251, 261, 250, 262, 256, 264, 288, 262, 269, 251}
	js, err = JudgeRows([]Row{
		{Goal: "over-compression", Case: "20 Mbit", Side: SideBase, Name: "compression", Round: 1, TPS: 106.6, Seconds: base},
		{Goal: "over-compression", Case: "20 Mbit", Side: SideTunnel, Name: "tunnel", Round: 1, TPS: 272.75, Seconds: tun},
		{Goal: "over-compression", Case: "20 Mbit", Side: SideBase, Name: "compression 2", Round: 2, TPS: 107.1, Seconds: base2},
		{Goal: "over-compression", Case: "20 Mbit", Side: SideTunnel, Name: "tunnel 2", Round: 2, TPS: 262.2, Seconds: tun2},
	})
	if err != nil {
		t.Fatal(err)
	}
	c = js[0].Cases[0]
	if js[0].Verdict != NotShown || !c.Bounded || c.N != 10 || !near(c.Figure, 2.50280) || !near(c.Lo, 2.39407) || !near(c.Hi, 2.60382) ||
		c.Basis != "batch means of each round's per-second TPS (10 batches a side; 10 batches a side): the span of the 2 rounds' intervals, the geometric mean of their ratios" {
		t.Errorf("%+v", js[0])
	}

	// Real 5 s points (the 20 Mbit quick study's 32 threads, internal/compare/testdata): two
	// batches a side are too few for an interval, and the basis says so.
	js, err = JudgeRows([]Row{
		{Goal: "over-compression", Case: "20 Mbit", Side: SideBase, Name: "plain", Round: 1, TPS: 59.206, Seconds: []float64{59.03, 62, 57, 57.99, 60.01}},
		{Goal: "over-compression", Case: "20 Mbit", Side: SideTunnel, Name: "compression", Round: 1, TPS: 106.816, Seconds: []float64{111.09, 104, 102, 114.98, 102.01}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if c := js[0].Cases[0]; c.Bounded || c.Verdict != NotShown || c.Basis != "batch means of the per-second TPS, 2 batches a side" {
		t.Errorf("%+v", c)
	}
}

// A round whose row failed, or that has one side only, is left out and the basis says so;
// the rest still decide.
func TestJudgeRoundsLeaveOutFailedRounds(t *testing.T) {
	var rows []Row
	for r, v := range [][2]float64{{100, 120}, {100, 125}, {100, 0}, {100, 118}, {100, 122}} {
		rows = append(rows, Row{Goal: "over-socat", Case: "32 threads", Side: SideBase, Name: "socat", Round: r + 1, TPS: v[0]},
			Row{Goal: "over-socat", Case: "32 threads", Side: SideTunnel, Name: "tunnel mux on", Round: r + 1, TPS: v[1]})
	}
	rows = append(rows, Row{Goal: "over-socat", Case: "32 threads", Side: SideBase, Name: "socat", Round: 6, TPS: 90})
	js, err := JudgeRows(rows)
	if err != nil {
		t.Fatal(err)
	}
	c := js[0].Cases[0]
	if c.N != 4 || !c.Bounded || c.Verdict != Met ||
		c.Basis != "4 paired rounds: geometric mean of the per-round ratios, t interval of their logs; 1 round with a failed row left out; 1 round with one side only left out" {
		t.Errorf("%+v", c)
	}
}

func TestJudgeRowsRefusesBadRows(t *testing.T) {
	ok := Row{Goal: "over-socat", Case: "2 threads", Side: SideBase, Name: "socat", Round: 1, TPS: 1}
	for name, rows := range map[string][]Row{
		"unknown goal": {{Goal: "over-nothing", Case: "c", Side: SideBase, Round: 1, TPS: 1}},
		"unknown side": {{Goal: "over-socat", Case: "c", Side: "middle", Round: 1, TPS: 1}},
		"a side twice": {ok, ok},
	} {
		if _, err := JudgeRows(rows); err == nil {
			t.Errorf("%s: judged", name)
		}
	}
}

func TestParseRows(t *testing.T) {
	good := RowsHeader + "\nover-socat\t2 threads\tbase\tsocat\t1\t1941.1\t1900,1950.5,1972\n\nover-socat\t2 threads\ttunnel\ttunnel mux on\t1\t1930.2\t-\n"
	rows, err := parseRows(strings.NewReader(good))
	if err != nil || len(rows) != 2 || rows[0].Seconds[1] != 1950.5 || rows[1].Seconds != nil || rows[1].Side != SideTunnel || rows[1].TPS != 1930.2 {
		t.Fatalf("%+v, %v", rows, err)
	}
	for name, in := range map[string]string{
		"no header":     "over-socat\t2 threads\tbase\tsocat\t1\t1941.1\t-\n",
		"six fields":    RowsHeader + "\nover-socat\t2 threads\tbase\tsocat\t1\t1941.1\n",
		"round 0":       RowsHeader + "\nover-socat\t2 threads\tbase\tsocat\t0\t1941.1\t-\n",
		"tps not a num": RowsHeader + "\nover-socat\t2 threads\tbase\tsocat\t1\tfailed\t-\n",
		"a bad second":  RowsHeader + "\nover-socat\t2 threads\tbase\tsocat\t1\t1941.1\t1900,,1950\n",
	} {
		if _, err := parseRows(strings.NewReader(in)); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
}
