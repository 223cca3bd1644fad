package study

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/wirelab/wirelab/internal/hostinfo"
	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/procfs"
	"github.com/wirelab/wirelab/internal/result"
)

// CalibrateOptions is `wirelab calibrate`: one point (Bench's one thread count) measured
// Rounds times on each of two link settings, alternating A and B, in one lab, so every
// run follows a re-shape of the wire.
type CalibrateOptions struct {
	Bench  Bench
	A, B   link.Condition
	Rounds int
}

// Calibrate measures this machine's run-to-run spread: the margin within which reports
// call two figures no measurable difference (result.MeasureCalibration).
type Calibrate struct {
	o CalibrateOptions
	matrix
	proc                    procfs.FS // this machine's /proc, from the session's Env
	load1Before, load1After float64
	finished                time.Time
}

// NewCalibrate builds the alternating cells: A, B, A, B, ...
func NewCalibrate(o CalibrateOptions) *Calibrate {
	c := &Calibrate{o: o, matrix: o.Bench.matrix()}
	threads := o.Bench.Threads[0]
	for r := 1; r <= o.Rounds; r++ {
		for _, cond := range []link.Condition{o.A, o.B} {
			cond := cond
			cell := o.Bench.tcpCell(o.Bench.cell(result.CalibrateStudy, SeriesName(cond, "plain"), threads, r))
			cell.Link = &cond
			c.cells = append(c.cells, cell)
		}
	}
	return c
}

// Name is result.CalibrateStudy.
func (c *Calibrate) Name() string { return result.CalibrateStudy }

// Needs is a client and a server starting on A. The wire is not checked between points:
// the spread asked for is the runs', re-shapes included.
func (c *Calibrate) Needs() Needs {
	series := []string{SeriesName(c.o.A, "plain"), SeriesName(c.o.B, "plain")}
	spec := c.o.Bench.spec(series, c.o.A)
	n := c.o.Bench.needs(c.o.A, false, spec, nil)
	n.ClientThreads = c.o.Bench.Threads
	return n
}

// Setup notes the machine's load before the first point, and keeps the session's /proc
// for the load after the last.
func (c *Calibrate) Setup(_ context.Context, e *Env) error {
	c.proc = e.Proc
	c.load1Before = loadAverage(c.proc)
	return nil
}

// Finish notes the load after the last point and adds the spread to the run's notes.
func (c *Calibrate) Finish(run *result.Run) {
	c.load1After, c.finished = loadAverage(c.proc), time.Now().UTC()
	cal, err := c.Calibration(run)
	if err != nil {
		run.Notes = append(run.Notes, "No run-to-run spread: "+err.Error())
		return
	}
	run.Notes = append(run.Notes, cal.Text())
}

// Calibration is the spread of run's points with when, where and under what load it was
// measured.
func (c *Calibrate) Calibration(run *result.Run) (*result.Calibration, error) {
	cal, err := result.MeasureCalibration(run.Points)
	if err != nil {
		return nil, err
	}
	cal.Measured, cal.Load1Before, cal.Load1After = c.finished, c.load1Before, c.load1After
	if cal.Measured.IsZero() {
		cal.Measured = time.Now().UTC()
	}
	cal.Machine = machineName()
	return cal, nil
}

// machineName is this machine's host name with its cores and CPU model: the machine a
// calibration belongs to.
func machineName() string {
	name, err := os.Hostname()
	if err != nil || name == "" {
		name = "this machine"
	}
	h := hostinfo.Local()
	s := fmt.Sprintf("%s, %d cores", name, runtime.NumCPU())
	if h.CPUModel != "" {
		s += " × " + h.CPUModel
	}
	return s
}
