package cli

import (
	"flag"
	"fmt"
	"path/filepath"
	"time"

	"github.com/wirelab/wirelab/internal/flagx"
	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/study"
)

const calibrateHelp = `measure this machine's run-to-run spread, the margin every report judges differences with.
One point (--threads, --duration) is measured --rounds times on each of two link settings,
alternating --slow and --fast in one lab, so every run follows a re-shape of the wire. The
spread of log TPS between the runs of a setting, pooled over both, gives the margin: two runs
of one point lie within it 95% of the time. It is saved with its 95% interval, the date,
the machine and its load in the data directory (/var/lib/wirelab/margin.json); run, the
studies, report and compare use it from then on unless given --margin. Run it on a quiet
machine: the load it measures under is the load its margin holds for.`

// minRounds and maxRounds bound --rounds: two rounds are the fewest with a spread (2
// degrees of freedom over both settings).
const minRounds, maxRounds = 2, 20

func cmdCalibrate(p *Process, args []string) error {
	fs := newFlagSet(p, "calibrate", calibrateHelp,
		"wirelab calibrate\nwirelab calibrate --rounds 6 --threads 16 --duration 20s")
	slowS := fs.String("slow", "20mbit", "the first link setting's rate ("+link.RateForm+")")
	fastS := fs.String("fast", "unlimited", "the second link setting's rate, alternated with --slow")
	rounds := fs.Int("rounds", 4, fmt.Sprintf("how many times each setting is measured (%d..%d)", minRounds, maxRounds))
	bf := addBenchFlags(fs, study.BenchDefaults{Threads: "8", Duration: 10 * time.Second, Warmup: 2 * time.Second, Tables: 4, TableSize: 10000})
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if given(fs, "repeat") {
		return usagef("calibrate: --repeat does not apply; --rounds says how often each setting runs")
	}
	a, b, err := calibrateLinks(fs, *slowS, *fastS, *rounds)
	if err != nil {
		return err
	}
	// Every run measures the same point. A --threads that does not parse is left to the
	// bench flags' own check, which names its form.
	v := fs.Lookup("threads").Value.String()
	if t, err := flagx.ParseThreads(v); err == nil && len(t) != 1 {
		return usagef("calibrate: --threads %q: want one thread count, e.g. 8: every run measures the same point", v)
	}
	path := p.marginPath()
	if path == "" {
		return fmt.Errorf("calibrate: this process has no data directory to keep the margin in")
	}
	spec, err := bf.ready(p, "calibrate", link.ShaperAuto, a, false)
	if err != nil {
		return err
	}
	st := study.NewCalibrate(study.CalibrateOptions{Bench: bf.bench(spec, link.ShaperAuto), A: a, B: b, Rounds: *rounds})
	fmt.Fprintf(p.Stderr, "calibrate: %d points (%s and %s alternating, %d threads), about %s; the margin goes to %s\n",
		st.Total(), link.FormatRate(a.RateBps), link.FormatRate(b.RateBps), spec.Bench.Threads[0], st.Estimate(), path)
	if err := runStudy(p, st, spec.Measure); err != nil {
		return err
	}
	run, err := result.Read(spec.Measure.Out)
	if err != nil {
		return fmt.Errorf("calibrate: %w", err)
	}
	cal, err := st.Calibration(run)
	if err != nil {
		return fmt.Errorf("calibrate: nothing saved: %w", err)
	}
	if cal.Results, err = filepath.Abs(spec.Measure.Out); err != nil {
		cal.Results = spec.Measure.Out
	}
	if err := result.WriteCalibration(path, cal); err != nil {
		return fmt.Errorf("calibrate: %w", err)
	}
	fmt.Fprintf(p.Stdout, "%s\nsaved to %s: reports judge with %s\n", cal.Text(), path, result.CalibratedMargin(cal).Text())
	return nil
}

// calibrateLinks are the two link settings calibrate alternates, refused where they
// would not re-shape the wire or cannot give a spread.
func calibrateLinks(fs *flag.FlagSet, slowS, fastS string, rounds int) (a, b link.Condition, err error) {
	if fs.NArg() > 0 {
		return a, b, usagef("calibrate: takes no arguments")
	}
	if rounds < minRounds || rounds > maxRounds {
		return a, b, usagef("calibrate: --rounds %d: want %d..%d (each setting needs two runs for a spread)", rounds, minRounds, maxRounds)
	}
	if a.RateBps, err = link.ParseRate(slowS); err != nil {
		return a, b, usagef("calibrate: --slow: %v", err)
	}
	if b.RateBps, err = link.ParseRate(fastS); err != nil {
		return a, b, usagef("calibrate: --fast: %v", err)
	}
	if a.RateBps == b.RateBps {
		return a, b, usagef("calibrate: --slow %s and --fast %s are one setting: the runs alternate between two, so each follows a re-shape", slowS, fastS)
	}
	return a, b, nil
}
