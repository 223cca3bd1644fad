package cli

import (
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/wirelab/wirelab/internal/flagx"
	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/study"
	"github.com/wirelab/wirelab/internal/tunnel"
)

const bandwidthHelp = `the Percona 2019 study (slow vs fast link, protocol compression, TLS) on this machine.
A 2-core box cannot fill 10 Gbit/s, but the study is about which resource saturates first,
and that reproduces at a smaller scale: the default slow link (20mbit) is network-bound
for oltp_read_only from a few threads on, the fast link (unlimited veth) is CPU-bound.
--calibrate measures this machine's unshaped peak and sets the slow link so the fast/slow
throughput ratio is near the blog's 18529/2867 ≈ 6.5. With --engine postgres, N2 goes through
wirelab's tunnel (PostgreSQL has no protocol compression) and N3 uses sslmode=require. --quick: threads 1,4,16,64,128,
5 s points after a 1 s warm-up, 4 tables`

// bandwidthQuick are --quick's values for the bandwidth study.
var bandwidthQuick = map[string]string{"threads": "1,4,16,64,128", "duration": "5s", "warmup": "1s", "tables": "4"}

func studyBandwidth(p *Process, args []string) error {
	fs := newFlagSet(p, "study bandwidth", bandwidthHelp,
		"wirelab study bandwidth --quick\nwirelab study bandwidth --slow 20mbit --fast unlimited --threads 1,16,128 --duration 30s\nwirelab study bandwidth --calibrate --experiments n1,n2")
	slowS := fs.String("slow", "20mbit", "the slow link's rate ("+link.RateForm+")")
	fastS := fs.String("fast", "unlimited", "the fast link's rate")
	exps := fs.String("experiments", "n1,n2,n3", "which of the blog's benchmarks: n1 (links), n2 (compression), n3 (TLS)")
	quick := fs.Bool("quick", false, "a subset of thread counts and short points (≤ 10 min on 2 cores)")
	calibrate := fs.Bool("calibrate", false, "measure the unshaped peak and choose the slow rate from it (overrides --slow)")
	wf := link.AddFlags(fs) // delay, jitter, loss apply to both links; --rate is not used here
	bf := addBenchFlags(fs, study.BenchDefaults{Threads: flagx.JoinInts(study.BandwidthThreads), Duration: 30 * time.Second, Warmup: 5 * time.Second, Tables: 8, TableSize: 100000})
	tf := addTunnelFlags(fs, "auto", tunnel.GroupWait{}) // N2's channel on PostgreSQL, which has no protocol compression
	bf.hosts = addHostsFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("study bandwidth: unexpected argument %q", fs.Arg(0))
	}
	if given(fs, "rate") {
		return usagef("study bandwidth: --rate does not apply; use --slow and --fast")
	}
	if err := applyQuick(fs, *quick, bandwidthQuick); err != nil {
		return err
	}
	base, shaper, err := wf.Condition()
	if err != nil {
		return &UsageError{err}
	}
	slowBps, err := link.ParseRate(*slowS)
	if err != nil {
		return usagef("--slow: %v", err)
	}
	fastBps, err := link.ParseRate(*fastS)
	if err != nil {
		return usagef("--fast: %v", err)
	}
	if slowBps == 0 || (fastBps != 0 && slowBps >= fastBps) {
		return usagef("--slow %s must be a finite rate below --fast %s", *slowS, *fastS)
	}
	experiments, err := study.ParseExperiments(*exps)
	if err != nil {
		return &UsageError{err}
	}
	topts, err := tf.options()
	if err != nil {
		return &UsageError{err}
	}
	if err := bandwidthTunnelFlagsApply(fs, bf, experiments); err != nil {
		return err
	}
	ho, err := bf.hosts.options(p, bf)
	if err != nil {
		return err
	}
	slow, fast := base, base
	slow.RateBps, fast.RateBps = slowBps, fastBps
	spec, err := bf.ready(p, "bandwidth", shaper, slow, slices.Contains(experiments, "n3"))
	if err != nil {
		return err
	}
	o := study.BandwidthOptions{Bench: bf.bench(spec, shaper), Slow: slow, Fast: fast, Experiments: experiments, Tunnel: topts}
	if *calibrate {
		o.CalibrateThreads = 64
	}
	st := study.NewBandwidth(o)
	fmt.Fprintf(p.Stderr, "study bandwidth: %d points (%s), about %s\n", st.Total(), strings.Join(experiments, ","), st.Estimate())
	return bf.hosts.run(p, ho, st, spec.measure())
}

// bandwidthTunnelFlagsApply refuses --tunnel-* flags where no series uses the tunnel: only
// N2 on an engine without protocol compression does.
func bandwidthTunnelFlagsApply(fs *flag.FlagSet, bf *benchFlags, experiments []string) error {
	named := tunnelFlagGiven(fs)
	if named == "" {
		return nil
	}
	k, err := bf.engine.kind()
	if err != nil {
		return err
	}
	if k.HasCompression() || !slices.Contains(experiments, "n2") {
		return usagef("study bandwidth: --%s applies only to N2 on PostgreSQL (its compressed series go through the tunnel); drop it", named)
	}
	return nil
}
