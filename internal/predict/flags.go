package predict

import (
	"errors"
	"flag"
	"fmt"
	"slices"

	"github.com/wirelab/wirelab/internal/flagx"
	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/model"
)

// Example is `wirelab predict`'s example, for its help.
const Example = `wirelab predict --from results/quick --rate 1gbit,10gbit --rtt 0.15ms --threads 1,8,64,512,2048 --server-cores 48 --client-cores 48
wirelab predict --from results/quick --series 20mbit --rate 50mbit --rtt 40ms --json
wirelab predict --from results/quick --crossover compression --threads 32,256
wirelab predict --from results/r20 --from results/unl --against results/r5`

// Options are the predict flags, validated.
type Options struct {
	From, Against []string
	Series        map[string]bool // nil: every series of From
	Links         []model.Link
	Threads       []int
	Machine       model.Machine // zero: the lab's machine of each profile
	Crossover     bool
	JSON          bool
	Out           string // where the chart goes
}

// Flags are the predict flags on a flag set, turned into Options by Options.
type Flags struct {
	fs                           *flag.FlagSet
	from, against, series, rates flagx.List
	rtt, threads, cross, out     *string
	serverCores, clientCores     *int
	shaped, json                 *bool
}

// AddFlags registers the predict flags on fs.
func AddFlags(fs *flag.FlagSet) *Flags {
	f := &Flags{fs: fs}
	fs.Var(&f.from, "from", "results directory whose points give the profiles (repeat or comma-separate to combine runs)")
	fs.Var(&f.series, "series", "use only these series of --from (comma-separated; default: all, one profile per variant)")
	fs.Var(&f.rates, "rate", "link rate(s) to predict, one column each: "+link.RateForm+" (default 1gbit,10gbit)")
	f.rtt = fs.String("rtt", "0.15ms", "round trip the network adds, e.g. 0.15ms or 40ms")
	f.threads = fs.String("threads", "1,8,64,512,2048", fmt.Sprintf("client thread counts to predict, each 1..%d", flagx.MaxThreads))
	f.serverCores = fs.Int("server-cores", 0, fmt.Sprintf("cores of a separate server host, 1..%d (default: the lab's machine, cores shared)", model.MaxCores))
	f.clientCores = fs.Int("client-cores", 0, fmt.Sprintf("cores of a separate client host, 1..%d (default: as many as --server-cores)", model.MaxCores))
	f.shaped = fs.Bool("shaped", false, "model the rate as the lab's token-bucket shaper (to compare with wirelab run --rate) rather than a physical link")
	f.cross = fs.String("crossover", "", `"compression": the link rate below which protocol compression pays, per thread count`)
	fs.Var(&f.against, "against", "results directory to predict point by point on its own links (the lab's) and compare with what it measured")
	f.json = fs.Bool("json", false, "print JSON instead of tables")
	f.out = fs.String("out", "", "directory for the chart predict-tps.png/.svg (default: the first --from)")
	return f
}

// Options validates every flag before anything is read; every error is a
// flagx.UsageError naming the flag.
func (f *Flags) Options() (Options, error) {
	if err := f.modeFlags(); err != nil {
		return Options{}, err
	}
	o, err := f.options()
	if err != nil {
		return o, &flagx.UsageError{Err: err}
	}
	o.JSON, o.Out = *f.json, *f.out
	if o.Out == "" {
		o.Out = o.From[0]
	}
	return o, nil
}

// modeFlags refuses, by name, a flag the chosen mode would parse and then ignore:
// --against predicts each point on its own link, thread count and machine; --crossover
// searches the rate itself and draws no chart; --json draws no chart either.
func (f *Flags) modeFlags() error {
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
		if !flagx.Given(f.fs, m.mode) {
			continue
		}
		if n := flagx.FirstGiven(f.fs, func(name string) bool { return slices.Contains(m.flags, name) }); n != "" {
			return flagx.Usagef("predict: --%s %s, so --%s would be ignored: drop it (e.g. %s)", m.mode, m.why, n, modeForm[m.mode])
		}
	}
	return nil
}

// modeForm is each mode's accepted form, for the messages that refuse a flag.
var modeForm = map[string]string{
	"against":   "wirelab predict --from results/r20 --against results/r5",
	"crossover": "wirelab predict --from results/quick --crossover compression --rtt 0.15ms --threads 32,256",
	"json":      "wirelab predict --from results/quick --rate 50mbit --json",
}

func (f *Flags) options() (Options, error) {
	o := Options{From: f.from, Against: f.against}
	if len(f.from) == 0 {
		return o, errors.New("--from is required: a results directory holding results.json, e.g. --from results/quick")
	}
	rates := f.rates
	if len(rates) == 0 {
		rates = flagx.List{"1gbit", "10gbit"}
	}
	d, err := link.ParseDuration("rtt", *f.rtt)
	if err != nil {
		return o, err
	}
	for _, r := range rates {
		bps, err := link.ParseRate(r)
		if err != nil {
			return o, fmt.Errorf("--rate: %w", err)
		}
		o.Links = append(o.Links, model.Link{RateBps: bps, RTT: d, Shaped: *f.shaped})
	}
	if o.Threads, err = flagx.ParseThreads(*f.threads); err != nil {
		return o, err
	}
	if o.Machine, err = machine(*f.serverCores, *f.clientCores); err != nil {
		return o, err
	}
	switch *f.cross {
	case "":
	case "compression":
		o.Crossover = true
	default:
		return o, fmt.Errorf("--crossover %q: want compression", *f.cross)
	}
	if len(f.series) > 0 {
		o.Series = map[string]bool{}
		for _, s := range f.series {
			o.Series[s] = true
		}
	}
	return o, nil
}

// machine is --server-cores and --client-cores: zero for neither (the lab's machine),
// else separate hosts, one taking the other's count when it is not given.
func machine(server, client int) (model.Machine, error) {
	for _, c := range []struct {
		flag string
		n    int
	}{{"server-cores", server}, {"client-cores", client}} {
		if c.n < 0 || c.n > model.MaxCores {
			return model.Machine{}, fmt.Errorf("--%s %d: want a whole number of cores from 1 to %d", c.flag, c.n, model.MaxCores)
		}
	}
	if server == 0 && client == 0 {
		return model.Machine{}, nil
	}
	if client == 0 {
		client = server
	}
	if server == 0 {
		server = client
	}
	m := model.Machine{ServerCores: server, ClientCores: client}
	return m, m.Validate()
}
