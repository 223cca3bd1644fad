package report

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/model"
	"github.com/wirelab/wirelab/internal/result"
)

// On other links: every study's section ends with what the model makes of its points. It
// first predicts the run's own points (on the lab's shaped links and 2 shared cores) and
// shows the error, then predicts the study's tables at the links (and, for bandwidth, the
// hardware) the original study used.

// otherLinksTarget is what a study is predicted at.
type otherLinksTarget struct {
	links   func(r *result.Run, pts []result.Point) []model.Link
	machine model.Machine             // zero: the lab's machine
	threads func(r *result.Run) []int // rows
	text    string                    // one sentence: what and why
}

// lanRTT is a data-centre round trip (Percona's 2019 post ran over a LAN).
const lanRTT = 150 * time.Microsecond

// studyThreads are the bandwidth study's thread counts (Percona 2019), trimmed to rows
// that show the shape.
var studyThreads = []int{1, 4, 16, 64, 256, 1024, 2048}

var otherLinksTargets = map[string]otherLinksTarget{
	"run": {
		links:   func(*result.Run, []result.Point) []model.Link { return lanLinks() },
		threads: specThreads,
		text:    "The run's tables at 1 and 10 Gbit/s with a 0.15 ms round trip, on this machine's cores.",
	},
	"bandwidth": {
		links:   func(*result.Run, []result.Point) []model.Link { return lanLinks() },
		machine: model.Machine{ServerCores: 48, ClientCores: 48},
		threads: func(*result.Run) []int { return studyThreads },
		text: "The study's links, 1 and 10 Gbit/s with a 0.15 ms round trip, on the study's class of hardware: " +
			"a 48-core server and a 48-core client as separate hosts, each core as fast as this machine's.",
	},
	"transport": {
		links:   transportLinks,
		threads: specThreads,
		text:    "Every path's profile across the study's remote round trip: what each path would do if it crossed the wire.",
	},
}

func lanLinks() []model.Link {
	return []model.Link{{RateBps: 1e9, RTT: lanRTT}, {RateBps: 1e10, RTT: lanRTT}}
}

func specThreads(r *result.Run) []int { return r.Spec.Threads }

// transportLinks is the remote paths' wire: their rate and round trip.
func transportLinks(r *result.Run, pts []result.Point) []model.Link {
	l := model.Link{RateBps: r.Spec.LinkRateBps, RTT: time.Duration(link.RTTMs(r.Spec.LinkDelayMs) * float64(time.Millisecond))}
	for _, p := range pts {
		if p.LinkDelayMs > 0 {
			l = model.Link{RateBps: p.LinkRateBps, RTT: time.Duration(link.RTTMs(p.LinkDelayMs) * float64(time.Millisecond))}
			break
		}
	}
	return []model.Link{l}
}

// otherLinksBlocks is the "On other links" sub-section of one study.
func otherLinksBlocks(r *result.Run, study string, pts []result.Point) ([]Block, error) {
	bs := []Block{Heading{3, "On other links"}}
	fits, err := model.Group(pts)
	if errors.Is(err, model.ErrNoProfile) {
		return append(bs, Paragraph{"The model cannot predict other links from these points: " + NoProfileText(r, pts) + "."}), nil
	}
	if err != nil {
		return nil, err
	}
	check, err := checkBlocks(fits)
	if err != nil {
		return nil, err
	}
	bs = append(bs, check...)
	tg, ok := otherLinksTargets[study]
	if !ok {
		return bs, nil
	}
	threads := tg.threads(r)
	if len(threads) == 0 {
		threads = []int{1}
	}
	pred, err := PredictionBlocks(Prediction{Fits: fits, Links: tg.links(r, pts), Machine: tg.machine, Threads: threads, Chart: study + "-other-links"})
	if err != nil {
		return nil, err
	}
	return append(append(bs, Paragraph{tg.text}), pred...), nil
}

// checkBlocks is the model against the run's own points: predicted vs measured TPS.
func checkBlocks(fits []*model.Fit) ([]Block, error) {
	t := Table{Caption: "The model on this run's points (lab links, shared cores)",
		Header: []string{"series", "threads", "measured TPS", "predicted TPS", "error", "model's bottleneck", "measured bottleneck"}}
	t.Numeric = []bool{false, true, true, true, true, false, false}
	var all []model.CheckPoint
	for _, f := range fits {
		cs, err := f.Check()
		if err != nil {
			return nil, err
		}
		for _, c := range cs {
			t.Rows = append(t.Rows, []string{c.Series, strconv.Itoa(c.Threads), num(c.Measured), num(c.Predicted),
				signedPct(c.Err), c.Bottleneck, orDash(c.Measurement)})
		}
		all = append(all, cs...)
	}
	med, worst := model.ErrorSummary(all)
	return []Block{Paragraph{fmt.Sprintf("The model (exact MVA of a closed network: round trips, CPU, uplink, downlink) "+
		"fitted on these points predicts them within %s (median), %s at worst. A link here is the lab's token-bucket "+
		"shaper: its burst refills while a transaction is elsewhere, so a transaction waits only for the bytes "+
		"the refill did not cover.", pct(med), pct(worst))}, t}, nil
}

// signedPct is an error as "+4.1%" or "-15%".
func signedPct(f float64) string {
	switch {
	case math.Abs(f) < 0.0005:
		return "0%"
	case f > 0:
		return "+" + pct(f)
	}
	return "-" + pct(-f)
}

// NoProfileText says why none of pts carries a per-transaction profile and, where a new
// run would record them, the command that measures the run again.
func NoProfileText(r *result.Run, pts []result.Point) string {
	why, rerun := result.NoProfileWhy(r, pts)
	if rerun {
		why += ": " + RerunCommand(r)
	}
	return why
}

// RerunCommand is the wirelab command that measures a run like r again.
func RerunCommand(r *result.Run) string {
	switch r.Study {
	case "", "run":
		cmd := fmt.Sprintf("wirelab run --rate %s --threads %s", link.FormatRate(r.Spec.LinkRateBps), strings.ReplaceAll(threadsList(r.Spec.Threads), " ", ""))
		if r.Spec.Driver == "pgbench" { // another tool on another server: the command must say so
			cmd += fmt.Sprintf(" --engine postgres --driver pgbench --workload %s --scale %d", r.Spec.Workload, r.Spec.Scale)
		}
		return cmd
	}
	return "wirelab study " + r.Study
}
