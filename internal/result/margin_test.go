package result

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Each margin's text gives its figure and where it came from.
func TestMarginText(t *testing.T) {
	cal := &Calibration{Margin: 0.0312, Lo: 0.022, Hi: 0.054, Measured: time.Date(2026, 3, 4, 9, 0, 0, 0, time.UTC),
		Machine: "db1, 2 cores", Load1Before: 0.24}
	for _, c := range []struct {
		m    Margin
		want string
	}{
		{DefaultMargin(), "±5% default (not measured on this machine: run `wirelab calibrate`)"},
		{FlagMargin(0.08), "±8% from --margin"},
		{CalibratedMargin(cal), "±3.1% measured by `wirelab calibrate` on 2026-03-04 (db1, 2 cores, load 0.2; 95% interval ±2.2% to ±5.4%)"},
	} {
		if got := c.m.Text(); got != c.want {
			t.Errorf("got  %q\nwant %q", got, c.want)
		}
	}
}

// The margin travels in results.json's spec; a file without one reads as the default.
func TestMarginRoundTrip(t *testing.T) {
	dir := t.TempDir()
	m := FlagMargin(0.07)
	in := &Run{Schema: Schema, Spec: Spec{Workload: "oltp_read_only", Margin: &m}, Points: []Point{{Study: "run", TPS: 1}}}
	if err := Write(dir, in); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "results.json"))
	if !strings.Contains(string(raw), `"margin": {`) || !strings.Contains(string(raw), `"source": "flag"`) {
		t.Errorf("results.json lacks the margin:\n%s", raw)
	}
	out, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := MarginOf(out); got.Value != 0.07 || got.Source != MarginFlag {
		t.Errorf("margin read back as %+v", got)
	}
	in.Spec.Margin = nil
	if err := Write(dir, in); err != nil {
		t.Fatal(err)
	}
	if out, _ = Read(dir); MarginOf(out) != DefaultMargin() || MarginOf(nil) != DefaultMargin() {
		t.Errorf("a file without a margin reads as %+v, want the default", MarginOf(out))
	}
}

// A calibration is saved and read back whole; a missing file is os.ErrNotExist, a file
// without a usable margin is refused.
func TestCalibrationFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wirelab", MarginFile)
	if _, err := ReadCalibration(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("no file: %v, want os.ErrNotExist", err)
	}
	c := &Calibration{Margin: 0.04, Lo: 0.03, Hi: 0.08, SDLog: 0.014, DF: 6, Threads: 8, Workload: "oltp_read_only",
		Settings: []CalibrationSetting{{Series: "20mbit", TPS: []float64{212, 214}, SDLog: 0.006}},
		Measured: time.Date(2026, 3, 4, 9, 0, 0, 0, time.UTC), Machine: "db1"}
	if err := WriteCalibration(path, c); err != nil {
		t.Fatal(err)
	}
	got, err := ReadCalibration(path)
	if err != nil || got.Margin != 0.04 || got.DF != 6 || len(got.Settings) != 1 || got.Settings[0].TPS[1] != 214 || !got.Measured.Equal(c.Measured) {
		t.Errorf("read back %+v, %v", got, err)
	}
	if err := os.WriteFile(path, []byte(`{"margin": 0}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadCalibration(path); !errors.Is(err, ErrBadCalibration) {
		t.Errorf("a margin of 0: %v", err)
	}
}

// The calibration of a run: its calibrate points grouped by series in the order they
// first ran, failed points left out, other studies' points ignored.
func TestMeasureCalibration(t *testing.T) {
	pt := func(series string, tps float64) Point {
		return Point{Study: CalibrateStudy, Series: series, Threads: 8, Workload: "oltp_read_only", DurationS: 10, TPS: tps}
	}
	pts := []Point{pt("20mbit", 210), pt("unlimited", 1500), pt("20mbit", 214), pt("unlimited", 1440),
		pt("20mbit", 212), pt("unlimited", 1470), {Study: "run", Series: "20mbit", TPS: 90}}
	failed := pt("unlimited", 10)
	failed.Failed = true
	c, err := MeasureCalibration(append(pts, failed))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Settings) != 2 || c.Settings[0].Series != "20mbit" || len(c.Settings[1].TPS) != 3 || c.DF != 4 || c.Threads != 8 {
		t.Errorf("calibration %+v", c)
	}
	if c.Margin <= 0 || c.Lo >= c.Margin || c.Hi <= c.Margin || c.Settings[1].SDLog <= c.Settings[0].SDLog {
		t.Errorf("margin %v (%v–%v), spreads %v and %v", c.Margin, c.Lo, c.Hi, c.Settings[0].SDLog, c.Settings[1].SDLog)
	}
	if want := math.Expm1(1.959963984540054 * math.Sqrt2 * c.SDLog); math.Abs(c.Margin-want) > 1e-12 {
		t.Errorf("margin %v, want %v from the pooled spread", c.Margin, want)
	}
	if _, err := MeasureCalibration(pts[:3]); err == nil {
		t.Error("one run of unlimited gave a margin")
	}
}
