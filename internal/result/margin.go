package result

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/wirelab/wirelab/internal/stats"
)

// Margin is the equivalence margin a run's verdicts were judged with (stats.Margin) and
// where it came from: results.json's spec.margin, so `wirelab report` redraws with the
// same one. Absent in older files, which read as the default.
type Margin struct {
	Value  float64      `json:"value"` // a fraction: 0.05 = ±5%
	Source MarginSource `json:"source"`
	// Calibration is the measurement behind a calibrated margin.
	Calibration *Calibration `json:"calibration,omitempty"`
}

// MarginSource is where a margin came from.
type MarginSource string

const (
	MarginDefault    MarginSource = "default"   // stats.DefaultMargin: not measured on the machine
	MarginCalibrated MarginSource = "calibrate" // this machine's spread, by `wirelab calibrate`
	MarginFlag       MarginSource = "flag"      // --margin on the command line
)

// DefaultMargin is the margin of a machine that was never calibrated, and of older results.
func DefaultMargin() Margin {
	return Margin{Value: float64(stats.DefaultMargin), Source: MarginDefault}
}

// FlagMargin is a margin given on the command line.
func FlagMargin(v float64) Margin { return Margin{Value: v, Source: MarginFlag} }

// CalibratedMargin is the margin c measured.
func CalibratedMargin(c *Calibration) Margin {
	return Margin{Value: c.Margin, Source: MarginCalibrated, Calibration: c}
}

// MarginOf is the margin a run was judged with: its own, else (older files) the default.
func MarginOf(r *Run) Margin {
	if r == nil || r.Spec.Margin == nil || r.Spec.Margin.Value <= 0 {
		return DefaultMargin()
	}
	return *r.Spec.Margin
}

// Stats is the margin as verdicts take it.
func (m Margin) Stats() stats.Margin { return stats.Margin(m.Value) }

// Text is the margin as every report prints it, with where it came from: "±3.1% measured
// by `wirelab calibrate` on 2026-03-04 (db1, load 0.2; 95% interval ±2.2% to ±5.4%)",
// "±5% default (not measured on this machine: run `wirelab calibrate`)", "±8% from
// --margin".
func (m Margin) Text() string { return m.Stats().Text() + " " + m.From() }

// From is where the margin came from, as Text words it after the value.
func (m Margin) From() string {
	switch m.Source {
	case MarginCalibrated:
		s := "measured by `wirelab calibrate`"
		if c := m.Calibration; c != nil {
			s += fmt.Sprintf(" on %s (%s, load %.1f; 95%% interval %s to %s)", c.Measured.UTC().Format("2006-01-02"),
				c.Machine, c.Load1Before, stats.Margin(c.Lo).Text(), stats.Margin(c.Hi).Text())
		}
		return s
	case MarginFlag:
		return "from --margin"
	}
	return "default (not measured on this machine: run `wirelab calibrate`)"
}

// Calibration is what `wirelab calibrate` measured: this machine's run-to-run spread (the
// same point repeated, alternating two link settings, in one lab) and the margin it gives
// (stats.MeasureMargin), with when, where and under what load.
type Calibration struct {
	Margin float64 `json:"margin"` // a fraction
	// Lo and Hi are the margin's 95% interval; SDLog the pooled standard deviation of log
	// TPS it comes from, on DF degrees of freedom.
	Lo    float64 `json:"margin_lo"`
	Hi    float64 `json:"margin_hi"`
	SDLog float64 `json:"sd_log_tps"`
	DF    int     `json:"df"`
	// Settings are the runs, one entry per link setting in the order they alternated.
	Settings []CalibrationSetting `json:"settings"`
	// The point every run measured.
	Workload  string  `json:"workload"`
	Threads   int     `json:"threads"`
	DurationS float64 `json:"duration_s"`
	// Measured is when the calibration finished; Machine the host it ran on (its name,
	// CPU model and cores); Load1 the 1-minute load average before and after.
	Measured    time.Time `json:"measured"`
	Machine     string    `json:"machine"`
	Load1Before float64   `json:"load1_before"`
	Load1After  float64   `json:"load1_after"`
	Results     string    `json:"results,omitempty"` // the results directory of its runs
}

// Text says what the calibration found, as the run's notes, its report and the command
// print it.
func (c *Calibration) Text() string {
	return fmt.Sprintf("Run-to-run spread on this machine: two runs of one point lie within %s of each other 95%% of the "+
		"time (sd of log TPS %.2f%% on %d degrees of freedom; 95%% interval of that margin %s to %s).",
		stats.Margin(c.Margin).Text(), 100*c.SDLog, c.DF, stats.Margin(c.Lo).Text(), stats.Margin(c.Hi).Text())
}

// CalibrationSetting is one link setting's runs.
type CalibrationSetting struct {
	Series string    `json:"series"`
	TPS    []float64 `json:"tps"`
	SDLog  float64   `json:"sd_log_tps"` // this setting's own spread
}

// MarginFile is the name of the calibration file in wirelab's data directory.
const MarginFile = "margin.json"

// WriteCalibration saves c at path, atomically (a temp file renamed).
func WriteCalibration(path string, c *Calibration) error {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return fmt.Errorf("encode calibration: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("write calibration: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write calibration: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write calibration: %w", err)
	}
	return nil
}

// ReadCalibration reads the calibration at path; os.ErrNotExist (wrapped) when the machine
// was never calibrated.
func ReadCalibration(path string) (*Calibration, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read calibration: %w", err)
	}
	var c Calibration
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("decode calibration %s: %w", path, err)
	}
	if c.Margin <= 0 || c.Margin >= 1 {
		return nil, fmt.Errorf("calibration %s: margin %v, want a fraction in (0, 1): %w", path, c.Margin, ErrBadCalibration)
	}
	return &c, nil
}

// ErrBadCalibration means a calibration file holds no usable margin.
var ErrBadCalibration = errors.New("bad calibration")

// CalibrateStudy is the study name of `wirelab calibrate`'s points.
const CalibrateStudy = "calibrate"

// MeasureCalibration is the run-to-run spread of a calibration's points (those of
// CalibrateStudy): the usable points of each series (link setting) are one group of
// repeats (stats.MeasureMargin). The one computation the calibrate command saves and its
// report shows; when, where and under what load are the caller's to fill in.
func MeasureCalibration(pts []Point) (*Calibration, error) {
	c := &Calibration{}
	at := map[string]int{}
	for _, p := range pts {
		if p.Study != CalibrateStudy || !p.Usable() {
			continue
		}
		i, ok := at[p.Series]
		if !ok {
			i = len(c.Settings)
			at[p.Series] = i
			c.Settings = append(c.Settings, CalibrationSetting{Series: p.Series})
		}
		c.Settings[i].TPS = append(c.Settings[i].TPS, p.TPS)
		c.Workload, c.Threads, c.DurationS = p.Workload, p.Threads, p.DurationS
	}
	groups := make([][]float64, len(c.Settings))
	for i, s := range c.Settings {
		groups[i] = s.TPS
	}
	s, err := stats.MeasureMargin(groups)
	if err != nil {
		return c, fmt.Errorf("calibration of %d setting(s): %w", len(groups), err)
	}
	c.Margin, c.Lo, c.Hi, c.SDLog, c.DF = float64(s.Margin), float64(s.Lo), float64(s.Hi), s.SDLog, s.DF
	for i := range c.Settings {
		c.Settings[i].SDLog = s.GroupSDLog[i]
	}
	return c, nil
}
