package report

import (
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/stats"
)

// calibrateFixture is `wirelab calibrate` with 4 rounds of 8 threads, 20mbit and unlimited
// alternating, judged with the margin an earlier calibration measured.
func calibrateFixture() *result.Run {
	r := &result.Run{Schema: result.Schema, Tool: "wirelab 0.1.0", Study: result.CalibrateStudy, RunID: "calibrate",
		Started: fixtureStart, Finished: fixtureStart.Add(3 * time.Minute),
		Environment: fixtureEnv("htb", "rate 20mbit", "htb rate 20Mbit ceil 20Mbit"),
		Spec: result.Spec{Workload: "oltp_read_only", Threads: []int{8}, DurationS: 10, WarmupS: 2, Repeat: 1, Tables: 4,
			TableSize: 10000, Series: []string{"20mbit", "unlimited"}, LinkRateBps: 20e6}}
	earlier := &result.Calibration{Margin: 0.031, Lo: 0.021, Hi: 0.061, SDLog: 0.0112, DF: 6,
		Measured: fixtureStart.Add(-48 * time.Hour), Machine: "lab1, 2 cores × AMD EPYC 7B13", Load1Before: 0.12}
	m := result.CalibratedMargin(earlier)
	r.Spec.Margin = &m
	tps := map[string][]float64{"20mbit": {212.4, 214.1, 211.8, 213.0}, "unlimited": {1480.2, 1431.7, 1502.9, 1455.0}}
	for round := range 4 {
		for _, s := range []string{"20mbit", "unlimited"} {
			r.Points = append(r.Points, result.Point{Study: result.CalibrateStudy, Series: s, Workload: "oltp_read_only",
				Threads: 8, Repeat: round + 1, TPS: tps[s][round], DurationS: 10, WarmupS: 2, Transport: "tcp", Channel: "direct"})
		}
	}
	return r
}

// The calibration's section shows each setting's runs and the spread they give, and the
// environment names the margin the run was judged with and where it came from.
func TestCalibrateSection(t *testing.T) {
	md := Markdown(mustBuild(t, calibrateFixture()))
	cal, err := result.MeasureCalibration(calibrateFixture().Points)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| 20mbit | 212.4, 214.1, 211.8, 213.0 |", "| unlimited | 1480, 1432, 1503, 1455 |",
		cal.Text(), "| equivalence margin | ±3.1% measured by \\`wirelab calibrate\\` on 2025-02-27",
		"(lab1, 2 cores × AMD EPYC 7B13, load 0.1; 95% interval ±2.1% to ±6.1%)"} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
}

// The margin a run records is the one its verdicts are read with: the same bandwidth run
// judged within ±30% (from --margin) calls more pairs no measurable difference than within
// the default ±5%, and every text that names the margin names this one.
func TestReportJudgesWithTheRunsMargin(t *testing.T) {
	def := Markdown(mustBuild(t, bandwidthFixture()))
	wide := bandwidthFixture()
	m := result.FlagMargin(0.3)
	wide.Spec.Margin = &m
	md := Markdown(mustBuild(t, wide))
	if n0, n1 := strings.Count(def, "no measurable difference"), strings.Count(md, "no measurable difference"); n1 <= n0 {
		t.Errorf("%d findings of no measurable difference within ±30%%, %d within ±5%%: the margin is not the run's", n1, n0)
	}
	if !strings.Contains(md, "| equivalence margin | ±30% from --margin |") || !strings.Contains(md, "within the margin, ±30% from --margin;") {
		t.Errorf("the report does not name its margin:\n%s", md)
	}
	if strings.Contains(md, stats.DefaultMargin.Text()+" default") {
		t.Error("a report judged within ±30% still names the default margin")
	}
}
