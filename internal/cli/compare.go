package cli

import (
	"fmt"

	"github.com/wirelab/wirelab/internal/compare"
	"github.com/wirelab/wirelab/internal/result"
)

const compareSummary = `set result directories side by side: per point and metric (TPS, latency p50/p95/p99) each
run's median and the change against the first run, called in benchstat's manner on
independent units: a point's repeats (run --repeat N), or, for a point run once, the batch
means of its measured seconds (the batches of the report's intervals), never its seconds.
Both sides of a row must count the same unit: repeats against batches is refused. The change
is the Hodges-Lehmann ratio with its 95% interval; it is called better or worse when a
Mann-Whitney U test of the same units gives p < 0.05 with at least 4 units a side, the
interval leaves out no change and the change exceeds the margin; "~" otherwise. The margin
is --margin, else the run-to-run spread the first run was judged with (measured by wirelab
calibrate, or 5% where it was not). Points pair by engine, driver, workload, threads and
link; the series (compression, TLS, transport) may differ. A point without its match is
refused, naming the fields that differ.`

// cmdCompare compares the results.json of two or more directories.
func cmdCompare(p *Process, args []string) error {
	fs := newFlagSet(p, "compare", compareSummary,
		"wirelab compare results/bandwidth-monday results/bandwidth-tuesday\n"+
			"wirelab compare --format md runs/20mbit runs/20mbit-compression > compare.md")
	format := fs.String("format", string(compare.Text), "text (an aligned table), md, html or json")
	margin := addMarginFlag(fs, "the one the first run was judged with, recorded in its results.json; 5% for older files")
	// Flags may come before, between or after the directories.
	dirs, err := parseWithArgs(fs, args)
	if err != nil {
		return err
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
	c, err := compare.Compare(in, compare.Margin{Value: m.Value, From: m.From()})
	if err != nil {
		return err
	}
	return compare.Write(p.Stdout, c, f)
}
