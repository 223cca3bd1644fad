package cli

import (
	"fmt"

	"github.com/wirelab/wirelab/internal/compare"
	"github.com/wirelab/wirelab/internal/result"
)

const compareSummary = `set result directories side by side: per point each run's median TPS and the change
against the first run, called in benchstat's manner. Samples are a point's repeats, or its
per-second TPS after warm-up when it ran once. A change is called when a Mann-Whitney U test
gives p < 0.05 with at least 4 samples a side and the change exceeds the margin; "~" otherwise.
Per-second samples are autocorrelated, so their p-value overstates the evidence: the margin,
the run-to-run spread the first run was judged with (measured by wirelab calibrate, or 5%
where it was not), is what keeps two runs of one point from being called different. Points pair by engine, driver,
workload, threads and link; the series (compression, TLS, transport) may differ. A point
without its match is refused, naming the fields that differ.`

// cmdCompare compares the results.json of two or more directories.
func cmdCompare(p *Process, args []string) error {
	fs := newFlagSet(p, "compare", compareSummary,
		"wirelab compare results/bandwidth-monday results/bandwidth-tuesday\n"+
			"wirelab compare --format md runs/20mbit runs/20mbit-compression > compare.md")
	format := fs.String("format", string(compare.Text), "text (an aligned table), md, html or json")
	margin := addMarginFlag(fs, "the one the first run was judged with, recorded in its results.json; 5% for older files")
	var dirs []string
	// Flags may come before, between or after the directories.
	for rest := args; ; {
		if err := parseFlags(fs, rest); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		dirs, rest = append(dirs, fs.Arg(0)), fs.Args()[1:]
	}
	f, err := compare.ParseFormat(*format)
	if err != nil {
		return usagef("compare: --format: %v", err)
	}
	if _, _, err := margin.given(); err != nil {
		return usagef("compare: %v", err)
	}
	if len(dirs) < 2 {
		fs.Usage()
		return usagef("compare: want two or more directories holding results.json (OLD NEW [MORE...]), got %d", len(dirs))
	}
	var in []compare.Input
	for _, d := range dirs {
		r, err := result.Read(d)
		if err != nil {
			return fmt.Errorf("compare %s: %w", d, err)
		}
		in = append(in, compare.Input{Name: d, Run: r})
	}
	m, err := margin.forRun(in[0].Run)
	if err != nil {
		return err
	}
	fmt.Fprintf(p.Stderr, "compare: a change is called only beyond the margin, %s\n", m.Text())
	c, err := compare.Compare(in, m.Value)
	if err != nil {
		return err
	}
	return compare.Write(p.Stdout, c, f)
}
