package predict

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/wirelab/wirelab/internal/flagx"
	"github.com/wirelab/wirelab/internal/model"
	"github.com/wirelab/wirelab/internal/report"
	"github.com/wirelab/wirelab/internal/result"
)

// Run predicts as o asks and prints the result to w: on sync-study runs each mode's
// commit term (commit.go), else by exact MVA of each variant's profile: against another
// run's points (against.go), the compression crossover (crossover.go), or tables and a
// chart in o.Out (or JSON) for o's links, threads and machine.
func Run(w io.Writer, o Options) error {
	if done, err := commitTerm(w, o); done {
		return err
	}
	fits, err := loadFits(o)
	if err != nil {
		return err
	}
	switch {
	case len(o.Against) > 0:
		return against(w, o, fits)
	case o.Crossover:
		return crossover(w, o, fits)
	}
	q := report.Prediction{Fits: fits, Links: o.Links, Machine: o.Machine, Threads: o.Threads, Chart: "predict-tps"}
	if o.JSON {
		v, err := predictionJSON(o, q)
		if err != nil {
			return err
		}
		return writeJSON(w, v)
	}
	blocks, err := report.PredictionBlocks(q)
	if err != nil {
		return fmt.Errorf("predict: %w", err)
	}
	fmt.Fprintf(w, "Predicted from %s by exact MVA (round trips, CPU, uplink, downlink).\n\n%s", strings.Join(o.From, ", "), report.Markdown(blocks))
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return fmt.Errorf("predict: chart dir: %w", err)
	}
	files, err := report.WriteCharts(o.Out, blocks)
	if err != nil {
		return fmt.Errorf("predict: %w", err)
	}
	if len(files) > 0 {
		fmt.Fprintf(w, "\nwrote %s/%s\n", o.Out, strings.Join(files, " and "))
	}
	return nil
}

// loadFits reads the --from runs and fits one profile per variant of the chosen series.
func loadFits(o Options) ([]*model.Fit, error) {
	var pts []result.Point
	seen := map[string]bool{}
	var first *result.Run
	profiles := 0
	for _, dir := range o.From {
		r, err := result.Read(dir)
		if err != nil {
			return nil, fmt.Errorf("predict: %w", err)
		}
		n := 0
		for _, pt := range r.Points {
			seen[pt.Series] = true
			if o.Series == nil || o.Series[pt.Series] {
				pts = append(pts, pt)
				if pt.Profile != nil {
					n++
				}
			}
		}
		if n == 0 && o.Series == nil {
			return nil, noProfiles(dir, r, r.Points)
		}
		if first == nil {
			first = r
		}
		profiles += n
	}
	for s := range o.Series {
		if !seen[s] {
			return nil, flagx.Usagef("--series %q: not in %s; want one of %s", s, strings.Join(o.From, ", "), strings.Join(slices.Sorted(maps.Keys(seen)), ", "))
		}
	}
	if profiles == 0 {
		return nil, noProfiles(strings.Join(o.From, ", ")+" (--series "+strings.Join(slices.Sorted(maps.Keys(o.Series)), ",")+")", first, pts)
	}
	fits, err := model.Group(pts)
	if err != nil {
		return nil, fmt.Errorf("predict: %w", err)
	}
	return fits, nil
}

// noProfiles is the error for points without a per-transaction profile, saying why they
// have none.
func noProfiles(where string, r *result.Run, pts []result.Point) error {
	return fmt.Errorf("predict: %s has no per-transaction profiles: %s", where, report.NoProfileText(r, pts))
}

func writeJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("predict: encode json: %w", err)
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// rttMs is a duration in milliseconds.
func rttMs(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// threadsN is "1 thread", "8 threads".
func threadsN(n int) string {
	if n == 1 {
		return "1 thread"
	}
	return fmt.Sprintf("%d threads", n)
}
