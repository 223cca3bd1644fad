package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/result"
)

// A bad --margin, and calibrate's own bad input, are usage errors named by flag before
// anything runs.
func TestMarginAndCalibrateUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--margin", "5"}, `--margin "5": want a percentage above 0% and below 100%`},
		{[]string{"run", "--margin", "0%"}, `--margin "0%"`},
		{[]string{"study", "bandwidth", "--margin", "100%"}, `--margin "100%"`},
		{[]string{"study", "replication", "--margin", "abc"}, `--margin "abc"`},
		{[]string{"study", "sync", "--quick", "--margin", "-2%"}, `--margin "-2%"`},
		{[]string{"report", "--margin", "150%", t.TempDir()}, `--margin "150%"`},
		{[]string{"calibrate", "--threads", "1,8"}, "calibrate: --threads \"1,8\": want one thread count"},
		{[]string{"calibrate", "--rounds", "1"}, "calibrate: --rounds 1: want 2..20"},
		{[]string{"calibrate", "--slow", "20mbit", "--fast", "20mbit"}, "are one setting"},
		{[]string{"calibrate", "--fast", "fast"}, "calibrate: --fast"},
		{[]string{"calibrate", "--repeat", "3"}, "calibrate: --repeat does not apply"},
		{[]string{"calibrate", "extra"}, "calibrate: takes no arguments"},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			p, _, errb, f := testProcess(t, true)
			if code := Main(c.args, p); code != 2 || !strings.Contains(errb.String(), c.want) {
				t.Errorf("exit %d, stderr %q; want 2 naming %q", code, errb, c.want)
			}
			if len(f.Calls) > 0 {
				t.Errorf("bad input ran commands: %v", f.Lines())
			}
		})
	}
}

// A measuring command judges with --margin, else this machine's calibration, else the
// default; a calibration file it cannot read is an error naming it, never a silent default.
func TestMarginForMachine(t *testing.T) {
	p, _, _, _ := testProcess(t, true)
	p.DataDir = t.TempDir()
	unset, five := "", "5%"
	if m, err := (marginFlag{&unset}).forMachine(p); err != nil || m != result.DefaultMargin() {
		t.Errorf("never calibrated: %+v, %v; want the default", m, err)
	}
	cal := &result.Calibration{Margin: 0.027, Lo: 0.019, Hi: 0.05, DF: 6, Measured: time.Now().UTC(), Machine: "db1"}
	if err := result.WriteCalibration(p.marginPath(), cal); err != nil {
		t.Fatal(err)
	}
	m, err := (marginFlag{&unset}).forMachine(p)
	if err != nil || m.Source != result.MarginCalibrated || m.Value != 0.027 || m.Calibration == nil {
		t.Errorf("calibrated: %+v, %v", m, err)
	}
	if m, err := (marginFlag{&five}).forMachine(p); err != nil || m != result.FlagMargin(0.05) {
		t.Errorf("--margin 5%%: %+v, %v", m, err)
	}
	if err := os.WriteFile(p.marginPath(), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := (marginFlag{&unset}).forMachine(p); err == nil || !strings.Contains(err.Error(), p.marginPath()) ||
		!strings.Contains(err.Error(), "wirelab calibrate") {
		t.Errorf("a corrupt calibration: %v", err)
	}
	p.DataDir = ""
	if m, err := (marginFlag{&unset}).forMachine(p); err != nil || m != result.DefaultMargin() {
		t.Errorf("no data directory: %+v, %v", m, err)
	}
}

// `wirelab report` redraws with the margin the run recorded, or with --margin; results.json
// keeps the run's own.
func TestReportRedrawsWithTheRunsMargin(t *testing.T) {
	dir := t.TempDir()
	recorded := result.FlagMargin(0.04)
	run := &result.Run{Schema: result.Schema, Study: "run", RunID: "t", Started: time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC),
		Spec:   result.Spec{Threads: []int{1}, Margin: &recorded},
		Points: []result.Point{{Study: "run", Series: "20mbit", LinkRateBps: 20e6, Threads: 1, TPS: 40, Bottleneck: "latency"}}}
	if err := result.Write(dir, run); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"report", dir}, "| equivalence margin | ±4% from --margin |"},
		{[]string{"report", "--margin", "9%", dir}, "| equivalence margin | ±9% from --margin |"},
	} {
		p, _, errb, _ := testProcess(t, false)
		if code := Main(c.args, p); code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, errb)
		}
		md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
		if !strings.Contains(string(md), c.want) {
			t.Errorf("%v: report lacks %q", c.args, c.want)
		}
	}
	if back, _ := result.Read(dir); result.MarginOf(back).Value != 0.04 {
		t.Errorf("results.json's margin became %+v", result.MarginOf(back))
	}
}
