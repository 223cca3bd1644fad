package cli

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/wirelab/wirelab/internal/compare"
	"github.com/wirelab/wirelab/internal/result"
)

// marginFlag is --margin, which every command that judges a difference takes (run, the
// studies, report, compare): the equivalence margin as a percentage, in place of the one
// the command would use otherwise.
type marginFlag struct{ v *string }

func addMarginFlag(fs *flag.FlagSet, otherwise string) marginFlag {
	return marginFlag{fs.String("margin", "", "the equivalence margin, e.g. 3%: a difference whose 95% interval lies "+
		"within it is no measurable difference (default: "+otherwise+")")}
}

// Where each kind of command takes its margin from when --margin is not given.
const (
	marginOfMachine = "this machine's run-to-run spread, measured by wirelab calibrate; 5% where it was never run"
	marginOfRun     = "the one the run was judged with, recorded in results.json; 5% for older files"
)

// given is the --margin given, ok false without one; a bad value is a usage error naming
// the flag and its form. A zero margin is refused: a run records it, and a recorded margin
// of zero reads as none (result.MarginOf).
func (f marginFlag) given() (m result.Margin, ok bool, err error) {
	if *f.v == "" {
		return m, false, nil
	}
	v, err := compare.ParseMargin(*f.v)
	if err != nil || v <= 0 {
		return m, false, usagef("--margin %q: want a percentage above 0%% and below 100%%, e.g. 3%%", *f.v)
	}
	return result.FlagMargin(v), true, nil
}

// forMachine is the margin a measuring command judges with: --margin, else this
// machine's calibration, else the default.
func (f marginFlag) forMachine(p *Process) (result.Margin, error) {
	if m, ok, err := f.given(); ok || err != nil {
		return m, err
	}
	return p.machineMargin()
}

// forRun is the margin a command that redraws run r judges with: --margin, else the one r
// was judged with.
func (f marginFlag) forRun(r *result.Run) (result.Margin, error) {
	if m, ok, err := f.given(); ok || err != nil {
		return m, err
	}
	return result.MarginOf(r), nil
}

// marginPath is where `wirelab calibrate` keeps this machine's margin; "" when the
// process has no data directory (tests in memory): never calibrated.
func (p *Process) marginPath() string {
	if p.DataDir == "" {
		return ""
	}
	return filepath.Join(p.DataDir, result.MarginFile)
}

// machineMargin is this machine's calibrated margin, else the default. A calibration file
// that cannot be read is an error: a margin is never silently replaced.
func (p *Process) machineMargin() (result.Margin, error) {
	path := p.marginPath()
	if path == "" {
		return result.DefaultMargin(), nil
	}
	c, err := result.ReadCalibration(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return result.DefaultMargin(), nil
	case err != nil:
		return result.Margin{}, fmt.Errorf("%w; run `wirelab calibrate` again, remove the file, or give --margin", err)
	}
	return result.CalibratedMargin(c), nil
}
