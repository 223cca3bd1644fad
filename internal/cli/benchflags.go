package cli

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/study"
)

// benchFlags are the load knobs every run and closed-loop study shares.
type benchFlags struct {
	fs        *flag.FlagSet // which flags the user gave
	threads   *string
	duration  *time.Duration
	warmup    *time.Duration
	workload  *string
	tables    *int
	tableSize *int
	randType  *string
	out       *string
	repeat    *int
	pool      *string
	congest   *string
	awake     *bool
	noWait    *bool
	engine    engineFlag
	driver    driverFlags
	server    *serverFlags
	hosts     *hostsFlags // run, bandwidth and transport only: nil elsewhere
}

func addBenchFlags(fs *flag.FlagSet, threads string, duration, warmup time.Duration, tables, size int) *benchFlags {
	return &benchFlags{
		fs:        fs,
		threads:   fs.String("threads", threads, "comma-separated client thread counts (sysbench --threads, pgbench -c), each 1..4096"),
		duration:  fs.Duration("duration", duration, "measured length of each point (>= 1s)"),
		warmup:    fs.Duration("warmup", warmup, "seconds run before each point's measurement and dropped from its averages"),
		workload:  fs.String("workload", "oltp_read_only", "sysbench workload (oltp_read_only, oltp_point_select, oltp_read_write, ...); with --driver pgbench a built-in script: tpcb-like (its default), select-only, simple-update"),
		tables:    fs.Int("tables", tables, "sysbench --tables"),
		tableSize: fs.Int("table-size", size, "sysbench --table-size (rows per table)"),
		randType:  fs.String("rand-type", "pareto", "sysbench --rand-type: uniform, gaussian, special, pareto"),
		out:       fs.String("out", "", "directory for results.json, results.csv and the report (default results/<study>-<time>)"),
		repeat:    fs.Int("repeat", 1, "run each point N times (mean ± 95% CI in the report)"),
		pool:      fs.String("buffer-pool", "1G", "the server's data cache, innodb_buffer_pool_size (MariaDB) or shared_buffers (PostgreSQL): large enough that the data set lives in memory"),
		congest:   addCongestionFlag(fs),
		awake:     addAwakeFlag(fs),
		noWait:    addNoWaitFlag(fs),
		engine:    addEngineFlag(fs),
		driver:    addDriverFlags(fs),
		server:    addServerFlags(fs),
	}
}

// benchSpec is benchFlags validated.
type benchSpec struct {
	Threads  []int
	Duration time.Duration
	Warmup   time.Duration
	OutDir   string
	Awake    bool // hold the CPUs out of deep idle while measuring
	NoWait   bool // fail instead of waiting for another measurement
	Engine   engine.Kind
	Load     driverSpec // the driver, its workload and (pgbench) scale
	// Existing is the --server-dsn server, logged in to; nil = the lab starts one.
	Existing *engine.External
}

var workloads = map[string]bool{"oltp_read_only": true, "oltp_read_write": true, "oltp_write_only": true,
	"oltp_point_select": true, "oltp_update_index": true, "oltp_update_non_index": true,
	"oltp_insert": true, "oltp_delete": true, "select_random_points": true, "select_random_ranges": true}

var randTypes = map[string]bool{"uniform": true, "gaussian": true, "special": true, "pareto": true}

// validate checks every flag and creates (and proves writable) the output directory; it
// runs before anything touches the kernel.
func (b *benchFlags) validate(p *Process, study string) (benchSpec, error) {
	var s benchSpec
	var err error
	if s.Threads, err = parseThreads(*b.threads); err != nil {
		return s, err
	}
	if *b.duration < time.Second {
		return s, fmt.Errorf("--duration %s: want at least 1s, e.g. 10s", *b.duration)
	}
	if *b.warmup < 0 || *b.warmup >= time.Hour {
		return s, fmt.Errorf("--warmup %s: want 0s or more, e.g. 2s", *b.warmup)
	}
	s.Duration, s.Warmup, s.Awake, s.NoWait = *b.duration, *b.warmup, *b.awake, *b.noWait
	if s.Engine, err = engine.Parse(*b.engine.v); err != nil {
		return s, err
	}
	if s.Load, err = b.driver.validate(b.fs, s.Engine, study, *b.workload); err != nil {
		return s, err
	}
	if !randTypes[*b.randType] {
		return s, fmt.Errorf("--rand-type %q: want one of %s", *b.randType, keys(randTypes))
	}
	if *b.tables < 1 || *b.tables > 1000 {
		return s, fmt.Errorf("--tables %d: want 1..1000", *b.tables)
	}
	if *b.tableSize < 1 || *b.tableSize > 100_000_000 {
		return s, fmt.Errorf("--table-size %d: want 1..100000000", *b.tableSize)
	}
	if *b.repeat < 1 || *b.repeat > 100 {
		return s, fmt.Errorf("--repeat %d: want 1..100", *b.repeat)
	}
	if err := lab.CheckBufferPool(*b.pool); err != nil {
		return s, err
	}
	if err := checkCongestion(p, *b.congest, b.hosts.given()); err != nil {
		return s, err
	}
	s.OutDir, err = outDir(*b.out, study)
	return s, err
}

// ready validates the knobs, then checks that this machine can build the lab (root, the
// tools, the kernel features the wire needs) and, with --server-dsn, that the server lets
// wirelab in: everything a study checks before it starts. tls says whether a point uses TLS.
func (b *benchFlags) ready(p *Process, study string, shaper link.Shaper, c link.Condition, tls bool) (benchSpec, error) {
	var spec benchSpec
	kind, err := b.engine.kind()
	if err != nil {
		return spec, err
	}
	existing, err := b.server.config(p, kind, tls)
	if err != nil {
		return spec, err
	}
	if spec, err = b.validate(p, study); err != nil {
		return spec, &UsageError{err}
	}
	if err := requireRoot(p); err != nil {
		return spec, err
	}
	if b.hosts.given() {
		// The hosts are checked when connected, before anything changes there; an
		// existing server, now.
		spec.Existing, err = b.hosts.existingServer(p, *b.tables, tls)
		return spec, err
	}
	if err := preflight(p, shaper, c); err != nil {
		return spec, err
	}
	if existing != nil {
		spec.Existing, err = openExisting(existing, *b.tables, "--server-dsn")
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

// measure is what the session needs of the spec.
func (s benchSpec) measure() measureOptions {
	return measureOptions{Out: s.OutDir, Awake: s.Awake, NoWait: s.NoWait}
}

// bench is the validated knobs as the study engine takes them.
func (b *benchFlags) bench(s benchSpec, shaper link.Shaper) study.Bench {
	return study.Bench{Driver: s.Load.Driver, Workload: s.Load.Workload, Scale: s.Load.Scale,
		Threads: s.Threads, Duration: s.Duration, Warmup: s.Warmup,
		Repeat: *b.repeat, Tables: *b.tables, TableSize: *b.tableSize, RandType: *b.randType,
		BufferPool: *b.pool, Shaper: shaper, Congestion: *b.congest, Engine: s.Engine, Existing: s.Existing}
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
func given(fs *flag.FlagSet, name string) bool {
	return firstGiven(fs, func(n string) bool { return n == name }) != ""
}

// firstGiven is the first flag, in name order, that the user set and match accepts; ""
// for none. Commands use it to refuse flags the rest of the command line makes moot.
func firstGiven(fs *flag.FlagSet, match func(name string) bool) string {
	named := ""
	fs.Visit(func(f *flag.Flag) {
		if named == "" && match(f.Name) {
			named = f.Name
		}
	})
	return named
}

// parseThreads parses "1,8,32": each 1..4096, no duplicates, at least one.
func parseThreads(v string) ([]int, error) {
	const form = "comma-separated whole numbers 1..4096, e.g. 1,8,32"
	if strings.TrimSpace(v) == "" {
		return nil, fmt.Errorf("--threads is empty: want %s", form)
	}
	seen := map[int]bool{}
	var out []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 4096 {
			return nil, fmt.Errorf("--threads %q: %q is not allowed; want %s", v, f, form)
		}
		if seen[n] {
			return nil, fmt.Errorf("--threads %q: %d appears twice; want %s", v, n, form)
		}
		seen[n] = true
		out = append(out, n)
	}
	return out, nil
}

func keys(m map[string]bool) string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, ", ")
}
