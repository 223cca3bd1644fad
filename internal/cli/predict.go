package cli

import "github.com/wirelab/wirelab/internal/predict"

// cmdPredict predicts a measured workload on other links and machines from the
// per-transaction profiles in results.json (internal/predict).
func cmdPredict(p *Process, args []string) error {
	fs := newFlagSet(p, "predict", "predict TPS, latency and the bottleneck on other links and machines from a run's profiles", predict.Example)
	f := predict.AddFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	o, err := f.Options()
	if err != nil {
		fs.Usage()
		return err
	}
	return predict.Run(p.Stdout, o)
}
