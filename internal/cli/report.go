package cli

import (
	"fmt"

	"github.com/wirelab/wirelab/internal/report"
	"github.com/wirelab/wirelab/internal/result"
)

// cmdReport re-renders report.md, report.html and the charts from DIR/results.json, so a
// report can be redrawn (after a wirelab upgrade, or from a copied run) without the lab.
func cmdReport(p *Process, args []string) error {
	fs := newFlagSet(p, "report", "re-render report.md, report.html and charts from DIR/results.json",
		"wirelab report ./runs/2025-03-01-bandwidth\nwirelab report --out /tmp/redraw ./runs/2025-03-01-bandwidth")
	out := fs.String("out", "", "write the report here instead of DIR")
	margin := addMarginFlag(fs, marginOfRun)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return usagef("report: want exactly one DIR holding results.json, got %d arguments", fs.NArg())
	}
	if _, _, err := margin.given(); err != nil {
		return err
	}
	dir := fs.Arg(0)
	r, err := result.Read(dir)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	// The report is drawn with the margin it names; results.json keeps the run's own.
	m, err := margin.forRun(r)
	if err != nil {
		return err
	}
	r.Spec.Margin = &m
	dest := dir
	if *out != "" {
		dest = *out
	}
	if err := report.Render(dest, r); err != nil {
		return fmt.Errorf("report %s: %w", dir, err)
	}
	fmt.Fprintf(p.Stdout, "wrote %s/report.md and %s/report.html (%d points)\n", dest, dest, len(r.Points))
	return nil
}
