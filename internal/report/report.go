package report

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/wirelab/wirelab/internal/result"
)

// Section draws the points of one study. Build receives the whole run (for the spec and
// environment) and the points whose Study matches Study(), in run order; it returns the
// blocks of its section, headings included. A section must not fail on missing cells: it
// shows what is there and says what is not.
type Section interface {
	Study() string
	Build(r *result.Run, points []result.Point) ([]Block, error)
}

// sections is the explicit registry, in the order the report shows them.
var sections = []Section{runSection{}, bandwidthSection{}, transportSection{}, replicationSection{}, syncSection{}, calibrateSection{}, replaySection{}}

// ErrNoPoints is returned when a run has no points to report.
var ErrNoPoints = errors.New("no points to report")

// Render writes report.md, report.html and every chart as NAME.png and NAME.svg into dir.
func Render(dir string, r *result.Run) error {
	blocks, err := Build(r)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("report dir: %w", err)
	}
	imgs := map[string][]byte{}
	for _, b := range blocks {
		c, ok := b.(*Chart)
		if !ok {
			continue
		}
		png, err := writeChart(dir, c)
		if err != nil {
			return err
		}
		imgs[c.Name] = png
	}
	if err := os.WriteFile(filepath.Join(dir, "report.md"), []byte(Markdown(blocks)), 0o644); err != nil {
		return fmt.Errorf("write report.md: %w", err)
	}
	title := "wirelab report"
	if r.Study != "" {
		title += ": " + r.Study
	}
	html := HTML(title, blocks, func(name string) []byte { return imgs[name] })
	if err := os.WriteFile(filepath.Join(dir, "report.html"), []byte(html), 0o644); err != nil {
		return fmt.Errorf("write report.html: %w", err)
	}
	return nil
}

// Build returns the blocks of the whole report: the header and environment, then one
// section per study present in the run. Points of a study no section knows are listed
// in a plain table rather than dropped.
func Build(r *result.Run) ([]Block, error) {
	if r == nil || len(r.Points) == 0 {
		return nil, ErrNoPoints
	}
	blocks := headerBlocks(r)
	known := map[string]bool{}
	for _, s := range sections {
		known[s.Study()] = true
		pts := pointsOf(r.Points, s.Study())
		if len(pts) == 0 {
			continue
		}
		bs, err := s.Build(r, pts)
		if err != nil {
			return nil, fmt.Errorf("report %s: %w", s.Study(), err)
		}
		var ol []Block
		if _, skip := s.(interface{ notOnOtherLinks() }); !skip {
			if ol, err = otherLinksBlocks(r, s.Study(), pts); err != nil {
				return nil, fmt.Errorf("report %s, other links: %w", s.Study(), err)
			}
		}
		blocks = append(append(append(blocks, bs...), ol...), clientsBlocks(pts)...)
	}
	var other []result.Point
	for _, p := range r.Points {
		if !known[p.Study] {
			other = append(other, p)
		}
	}
	if len(other) > 0 {
		blocks = append(blocks, Heading{2, "Other points"},
			Paragraph{"These points belong to a study this report does not know how to draw; they are listed as measured."},
			pointsTable("All points", other))
	}
	return blocks, nil
}

func pointsOf(pts []result.Point, study string) []result.Point {
	var out []result.Point
	for _, p := range pts {
		if p.Study == study {
			out = append(out, p)
		}
	}
	return out
}
