package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/wirelab/wirelab/internal/flagx"
	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/model"
	"github.com/wirelab/wirelab/internal/report"
	"github.com/wirelab/wirelab/internal/result"
)

const predictExample = `wirelab predict --from results/quick --rate 1gbit,10gbit --rtt 0.15ms --threads 1,8,64,512,2048 --server-cores 48 --client-cores 48
wirelab predict --from results/quick --series 20mbit --rate 50mbit --rtt 40ms --json
wirelab predict --from results/quick --crossover compression --threads 32,256
wirelab predict --from results/r20 --from results/unl --against results/r5`

// predictOptions are the predict flags, validated.
type predictOptions struct {
	from, against []string
	series        map[string]bool
	links         []model.Link
	threads       []int
	machine       model.Machine // zero: the lab's machine of each profile
	crossover     bool
	json          bool
	out           string
}

// listFlag collects a flag given several times or as a comma-separated list.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*l = append(*l, s)
		}
	}
	return nil
}

// cmdPredict predicts a measured workload on other links and machines from the
// per-transaction profiles in results.json (internal/model).
func cmdPredict(p *Process, args []string) error {
	fs := newFlagSet(p, "predict", "predict TPS, latency and the bottleneck on other links and machines from a run's profiles", predictExample)
	var from, against, series, rates listFlag
	fs.Var(&from, "from", "results directory whose points give the profiles (repeat or comma-separate to combine runs)")
	fs.Var(&series, "series", "use only these series of --from (comma-separated; default: all, one profile per variant)")
	fs.Var(&rates, "rate", "link rate(s) to predict, one column each: "+link.RateForm+" (default 1gbit,10gbit)")
	rtt := fs.String("rtt", "0.15ms", "round trip the network adds, e.g. 0.15ms or 40ms")
	threads := fs.String("threads", "1,8,64,512,2048", "client thread counts to predict, each 1..4096")
	serverCores := fs.Int("server-cores", 0, fmt.Sprintf("cores of a separate server host, 1..%d (default: the lab's machine, cores shared)", model.MaxCores))
	clientCores := fs.Int("client-cores", 0, fmt.Sprintf("cores of a separate client host, 1..%d (default: as many as --server-cores)", model.MaxCores))
	shaped := fs.Bool("shaped", false, "model the rate as the lab's token-bucket shaper (to compare with wirelab run --rate) rather than a physical link")
	cross := fs.String("crossover", "", `"compression": the link rate below which protocol compression pays, per thread count`)
	fs.Var(&against, "against", "results directory to predict point by point on its own links (the lab's) and compare with what it measured")
	asJSON := fs.Bool("json", false, "print JSON instead of tables")
	out := fs.String("out", "", "directory for the chart predict-tps.png/.svg (default: the first --from)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := predictModeFlags(fs); err != nil {
		fs.Usage()
		return err
	}
	o, err := predictFlags(from, against, series, rates, *rtt, *threads, *serverCores, *clientCores, *shaped, *cross)
	if err != nil {
		fs.Usage()
		return &UsageError{err}
	}
	o.json, o.out = *asJSON, *out
	if o.out == "" {
		o.out = o.from[0]
	}
	return runPredict(p, o)
}

// predictModeFlags refuses, by name, a flag the chosen mode would parse and then ignore:
// --against predicts each point on its own link, thread count and machine; --crossover
// searches the rate itself and draws no chart; --json draws no chart either.
func predictModeFlags(fs *flag.FlagSet) error {
	ignored := []struct {
		mode, why string
		flags     []string
	}{
		{"against", "predicts each point of the run on its own link, at its own thread count, on the lab's machine",
			[]string{"rate", "rtt", "threads", "out", "server-cores", "client-cores", "shaped", "crossover"}},
		{"crossover", "searches the link rate itself and draws no chart", []string{"rate", "out"}},
		{"json", "prints the prediction and draws no chart", []string{"out"}},
	}
	for _, m := range ignored {
		if !given(fs, m.mode) {
			continue
		}
		if n := firstGiven(fs, func(name string) bool { return slices.Contains(m.flags, name) }); n != "" {
			return usagef("predict: --%s %s, so --%s would be ignored: drop it (e.g. %s)", m.mode, m.why, n, predictForm[m.mode])
		}
	}
	return nil
}

// predictForm is each mode's accepted form, for the messages that refuse a flag.
var predictForm = map[string]string{
	"against":   "wirelab predict --from results/r20 --against results/r5",
	"crossover": "wirelab predict --from results/quick --crossover compression --rtt 0.15ms --threads 32,256",
	"json":      "wirelab predict --from results/quick --rate 50mbit --json",
}

// predictFlags validates every flag before anything is read.
func predictFlags(from, against, series, rates listFlag, rtt, threads string, server, client int, shaped bool, cross string) (predictOptions, error) {
	o := predictOptions{from: from, against: against}
	if len(from) == 0 {
		return o, errors.New("--from is required: a results directory holding results.json, e.g. --from results/quick")
	}
	if len(rates) == 0 {
		rates = listFlag{"1gbit", "10gbit"}
	}
	d, err := link.ParseDuration("rtt", rtt)
	if err != nil {
		return o, err
	}
	for _, r := range rates {
		bps, err := link.ParseRate(r)
		if err != nil {
			return o, fmt.Errorf("--rate: %w", err)
		}
		o.links = append(o.links, model.Link{RateBps: bps, RTT: d, Shaped: shaped})
	}
	if o.threads, err = flagx.ParseThreads(threads); err != nil {
		return o, err
	}
	for _, c := range []struct {
		flag string
		n    int
	}{{"server-cores", server}, {"client-cores", client}} {
		if c.n < 0 || c.n > model.MaxCores {
			return o, fmt.Errorf("--%s %d: want a whole number of cores from 1 to %d", c.flag, c.n, model.MaxCores)
		}
	}
	if server != 0 || client != 0 {
		if client == 0 {
			client = server
		}
		if server == 0 {
			server = client
		}
		o.machine = model.Machine{ServerCores: server, ClientCores: client}
		if err := o.machine.Validate(); err != nil {
			return o, err
		}
	}
	switch cross {
	case "":
	case "compression":
		o.crossover = true
	default:
		return o, fmt.Errorf("--crossover %q: want compression", cross)
	}
	if len(series) > 0 {
		o.series = map[string]bool{}
		for _, s := range series {
			o.series[s] = true
		}
	}
	return o, nil
}

// loadFits reads the --from runs and fits one profile per variant.
func loadFits(o predictOptions) ([]*model.Fit, error) {
	var pts []result.Point
	seen := map[string]bool{}
	var first *result.Run
	profiles := 0
	for _, dir := range o.from {
		r, err := result.Read(dir)
		if err != nil {
			return nil, fmt.Errorf("predict: %w", err)
		}
		n := 0
		for _, pt := range r.Points {
			seen[pt.Series] = true
			if o.series == nil || o.series[pt.Series] {
				pts = append(pts, pt)
				if pt.Profile != nil {
					n++
				}
			}
		}
		if n == 0 && o.series == nil {
			return nil, noProfiles(dir, r, r.Points)
		}
		if first == nil {
			first = r
		}
		profiles += n
	}
	for s := range o.series {
		if !seen[s] {
			return nil, &UsageError{fmt.Errorf("--series %q: not in %s; want one of %s", s, strings.Join(o.from, ", "), strings.Join(slices.Sorted(maps.Keys(seen)), ", "))}
		}
	}
	if profiles == 0 {
		return nil, noProfiles(strings.Join(o.from, ", ")+" (--series "+strings.Join(slices.Sorted(maps.Keys(o.series)), ",")+")", first, pts)
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

func runPredict(p *Process, o predictOptions) error {
	if done, err := predictCommit(p, o); done {
		return err
	}
	fits, err := loadFits(o)
	if err != nil {
		return err
	}
	switch {
	case len(o.against) > 0:
		return predictAgainst(p, o, fits)
	case o.crossover:
		return predictCrossover(p, o, fits)
	}
	q := report.Prediction{Fits: fits, Links: o.links, Machine: o.machine, Threads: o.threads, Chart: "predict-tps"}
	if o.json {
		v, err := predictionJSON(o, q)
		if err != nil {
			return err
		}
		return writeJSON(p, v)
	}
	blocks, err := report.PredictionBlocks(q)
	if err != nil {
		return fmt.Errorf("predict: %w", err)
	}
	fmt.Fprintf(p.Stdout, "Predicted from %s by exact MVA (round trips, CPU, uplink, downlink).\n\n%s", strings.Join(o.from, ", "), report.Markdown(blocks))
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return fmt.Errorf("predict: chart dir: %w", err)
	}
	files, err := report.WriteCharts(o.out, blocks)
	if err != nil {
		return fmt.Errorf("predict: %w", err)
	}
	if len(files) > 0 {
		fmt.Fprintf(p.Stdout, "\nwrote %s/%s\n", o.out, strings.Join(files, " and "))
	}
	return nil
}

func writeJSON(p *Process, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("predict: encode json: %w", err)
	}
	_, err = fmt.Fprintf(p.Stdout, "%s\n", b)
	return err
}

// roundRate keeps three significant figures of a rate, as a person would quote it.
func roundRate(bps float64) int64 {
	if bps <= 0 {
		return 0
	}
	e := math.Pow(10, math.Floor(math.Log10(bps))-2)
	return int64(math.Round(bps/e) * e)
}

// rttMs is a duration in milliseconds.
func rttMs(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
