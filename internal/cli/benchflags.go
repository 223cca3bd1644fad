package cli

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/flagx"
	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/study"
)

// benchFlags are the knobs every run and closed-loop study shares: the load's
// (study.BenchFlags), the engine, an existing server or real hosts, and where and how
// the measurement runs.
type benchFlags struct {
	fs      *flag.FlagSet // which flags the user gave
	load    *study.BenchFlags
	out     *string
	congest *string
	measure *measureFlags
	margin  marginFlag
	engine  engineFlag
	server  *serverFlags
	hosts   *hostsFlags // run, bandwidth and transport only: nil elsewhere
}

func addBenchFlags(fs *flag.FlagSet, d study.BenchDefaults) *benchFlags {
	return &benchFlags{
		fs:      fs,
		load:    study.AddBenchFlags(fs, d),
		out:     addOutFlag(fs, "<study>"),
		congest: addCongestionFlag(fs),
		measure: addMeasureFlags(fs),
		margin:  addMarginFlag(fs, marginOfMachine),
		engine:  addEngineFlag(fs),
		server:  addServerFlags(fs),
	}
}

// addOutFlag is --out, where a measuring command writes its results; study names the
// default directory, results/<study>-<time>.
func addOutFlag(fs *flag.FlagSet, study string) *string {
	return fs.String("out", "", "directory for results.json, results.csv and the report (default results/"+study+"-<time>)")
}

// benchSpec is benchFlags validated.
type benchSpec struct {
	Bench   study.Bench    // the load; Shaper, Congestion and Existing are set by bench
	Measure measureOptions // where the results go, and how the session measures
	// Existing is the --server-dsn server, logged in to; nil = the lab starts one.
	Existing *engine.External
}

// validate checks every flag and creates (and proves writable) the output directory; it
// runs before anything touches the kernel.
func (b *benchFlags) validate(p *Process, studyName string) (benchSpec, error) {
	var s benchSpec
	k, err := engine.Parse(*b.engine.v)
	if err != nil {
		return s, err
	}
	if s.Bench, err = b.load.Bench(k, studyName); err != nil {
		return s, err
	}
	if err := checkCongestion(p, *b.congest, b.hosts.given()); err != nil {
		return s, err
	}
	if s.Measure, err = b.measure.options(""); err != nil {
		return s, err
	}
	s.Measure.Out, err = outDir(*b.out, studyName)
	return s, err
}

// ready validates the knobs, then checks that this machine can build the lab (root, the
// tools, the kernel features the wire needs) and, with --server-dsn, that the server lets
// wirelab in: everything a study checks before it starts. tls says whether a point uses TLS.
func (b *benchFlags) ready(p *Process, studyName string, shaper link.Shaper, c link.Condition, tls bool) (benchSpec, error) {
	var spec benchSpec
	kind, err := b.engine.kind()
	if err != nil {
		return spec, err
	}
	existing, err := b.server.config(p, kind, tls)
	if err != nil {
		return spec, err
	}
	if spec, err = b.validate(p, studyName); err != nil {
		return spec, &UsageError{err}
	}
	if spec.Measure.Margin, err = b.margin.forMachine(p); err != nil {
		return spec, err
	}
	if err := requireRoot(p); err != nil {
		return spec, err
	}
	if b.hosts.given() {
		// The hosts are checked when connected, before anything changes there; an
		// existing server, now.
		spec.Existing, err = b.hosts.existingServer(p, spec.Bench.Tables, tls)
		return spec, err
	}
	if err := preflight(p, shaper, c); err != nil {
		return spec, err
	}
	if existing != nil {
		spec.Existing, err = study.OpenExisting(context.Background(), existing, spec.Bench.Tables, "--server-dsn")
	}
	return spec, err
}

// refuseCompression is a usage error when --engine has no protocol compression; flag names
// the option that asked for it.
func (b *benchFlags) refuseCompression(flag string) error {
	k, err := b.engine.kind()
	if err != nil {
		return err
	}
	if err := k.RefuseCompression(flag); err != nil {
		return &UsageError{err}
	}
	return nil
}

// bench is the validated knobs as the study engine takes them.
func (b *benchFlags) bench(s benchSpec, shaper link.Shaper) study.Bench {
	sb := s.Bench
	sb.Shaper, sb.Congestion, sb.Existing = shaper, *b.congest, s.Existing
	return sb
}

// outDir is --out, or results/<study>-<time>, created and proved writable before anything
// touches the kernel.
func outDir(flagValue, study string) (string, error) {
	dir := flagValue
	if dir == "" {
		dir = filepath.Join("results", study+"-"+time.Now().Format("20060102-150405"))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("--out %s: cannot create it: %w", dir, err)
	}
	probe := filepath.Join(dir, ".wirelab-write-test")
	if err := os.WriteFile(probe, nil, 0o644); err != nil {
		return "", fmt.Errorf("--out %s: not writable: %w", dir, err)
	}
	_ = os.Remove(probe)
	return dir, nil
}

// applyQuick is --quick for every study: each flag the user did not give takes the
// study's quick value. It runs after parsing, before validation.
func applyQuick(fs *flag.FlagSet, quick bool, values map[string]string) error {
	if !quick {
		return nil
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	names := make([]string, 0, len(values))
	for k := range values {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if set[k] {
			continue
		}
		if err := fs.Set(k, values[k]); err != nil {
			return fmt.Errorf("--quick: %s=%s: %w", k, values[k], err)
		}
	}
	return nil
}

// given reports whether the user set the flag name.
func given(fs *flag.FlagSet, name string) bool { return flagx.Given(fs, name) }

// firstGiven is the first flag, in name order, that the user set and match accepts.
func firstGiven(fs *flag.FlagSet, match func(name string) bool) string {
	return flagx.FirstGiven(fs, match)
}
