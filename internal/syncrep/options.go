package syncrep

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/pgbench"
)

// Workloads are the sysbench scripts the study runs: writes only, so every transaction
// ends in a commit that waits for the mode. oltp_insert is one autocommit INSERT per
// transaction, the field reports' "one INSERT"; oltp_write_only is BEGIN, two UPDATEs, a
// DELETE, an INSERT, COMMIT.
var Workloads = []string{"oltp_write_only", "oltp_insert"}

// PgbenchWorkloads are pgbench's built-in write scripts, for --engine postgres: each
// transaction is BEGIN, its statements and END, one commit. tpcb-like updates an account,
// its teller and its branch and inserts into history; simple-update leaves out the teller
// and branch updates, so its clients never queue on the same row.
var PgbenchWorkloads = []string{pgbench.TPCB, pgbench.SimpleUpdate}

// MaxScale is the largest pgbench data set the study takes: pgbench_accounts then has
// 10 million rows, as many as sysbench's largest --table-size, which the checksum after
// every point (an md5 of every row's md5, aggregated in one string) handles.
const MaxScale = 100

// Options is the whole study, validated by Validate before anything is created.
type Options struct {
	Engine   engine.Kind // "" = MariaDB
	Modes    []Mode
	Workload string
	RTTs     []time.Duration
	Threads  []int
	Duration time.Duration // measured part of each point
	Warmup   time.Duration // run before it, left out of the figures
	// Link is the wire's other settings (rate, jitter, loss); each point's delay is its RTT/2.
	Link            link.Condition
	Shaper          link.Shaper
	SemiSyncTimeout time.Duration
	TargetTPS       float64 // 0 = no target
	// Tables and TableSize are sysbench's data set; Scale is pgbench's (pgbench -i -s),
	// 0 with a sysbench workload, as Tables and TableSize are with a pgbench one.
	Tables         int
	TableSize      int
	Scale          int
	BufferPool     string
	CatchUpTimeout time.Duration
	CheckWire      bool
}

// semiSyncMargin: a semi-sync commit under load waits for the acknowledgements of the
// commits queued before it, several round trips, so the timeout must be this many times
// the largest RTT for semi-sync never to fall back on a slow wire rather than a lost one.
const semiSyncMargin = 10

// Pgbench says whether the workload is one of pgbench's scripts (else sysbench's).
func (o Options) Pgbench() bool { return slices.Contains(PgbenchWorkloads, o.Workload) }

// kind is the engine, MariaDB unless set.
func (o Options) kind() engine.Kind {
	if o.Engine == "" {
		return engine.MariaDB
	}
	return o.Engine
}

// Validate checks everything a flag can get wrong, naming the flag and the accepted form.
func (o Options) Validate() error {
	maxRTT := slices.Max(append([]time.Duration{0}, o.RTTs...))
	semi := hasSemiSync(o.Modes)
	checks := []struct {
		bad bool
		msg string
	}{
		{len(o.Modes) == 0, "--modes is empty: want at least one mode"},
		{!slices.Contains(Workloads, o.Workload) && !o.Pgbench(), fmt.Sprintf("--workload %q: want one of %s (sysbench) or, with --engine postgres, %s (pgbench)",
			o.Workload, strings.Join(Workloads, ", "), strings.Join(PgbenchWorkloads, ", "))},
		{o.Pgbench() && o.kind() != engine.Postgres, fmt.Sprintf("--workload %s is a pgbench script, and pgbench drives PostgreSQL only: with --engine %s want one of %s, or add --engine postgres for %s",
			o.Workload, o.kind(), strings.Join(Workloads, ", "), strings.Join(PgbenchWorkloads, ", "))},
		{len(o.RTTs) == 0, "--rtts is empty: want round-trip times like 0,1ms,7ms,20ms,100ms"},
		{len(o.Threads) == 0, "--threads is empty: want thread counts like 1,8,32"},
		{o.Duration < 3*time.Second, fmt.Sprintf("--duration %s: want at least 3s", o.Duration)},
		{o.Warmup < 0, fmt.Sprintf("--warmup %s: want 0 or more", o.Warmup)},
		{semi && o.SemiSyncTimeout < semiSyncMargin*maxRTT, fmt.Sprintf(
			"--semisync-timeout %s: want at least %d × the largest --rtts (%s), e.g. %s: under load a commit waits several round trips, and a shorter timeout makes semi-sync fall back to asynchronous",
			o.SemiSyncTimeout, semiSyncMargin, maxRTT, semiSyncMargin*maxRTT)},
		{o.SemiSyncTimeout > time.Hour, fmt.Sprintf("--semisync-timeout %s: want at most 1h", o.SemiSyncTimeout)},
		{o.TargetTPS < 0, fmt.Sprintf("--target-tps %g: want 0 (none) or more", o.TargetTPS)},
		{!o.Pgbench() && (o.Tables < 1 || o.Tables > 100), fmt.Sprintf("--tables %d: want 1..100", o.Tables)},
		{!o.Pgbench() && (o.TableSize < 1 || o.TableSize > 10_000_000), fmt.Sprintf("--table-size %d: want 1..10000000", o.TableSize)},
		{!o.Pgbench() && o.Scale != 0, fmt.Sprintf("--scale %d is pgbench's data set; with --workload %s the data set is --tables × --table-size", o.Scale, o.Workload)},
		{o.Pgbench() && (o.Scale < 1 || o.Scale > MaxScale), fmt.Sprintf("--scale %d: want 1..%d (pgbench -i -s: 100000 accounts, about 15 MB, per unit)", o.Scale, MaxScale)},
		{o.Pgbench() && (o.Tables != 0 || o.TableSize != 0), fmt.Sprintf("--tables/--table-size are sysbench's; with --workload %s the data set is --scale", o.Workload)},
		{o.CatchUpTimeout < 10*time.Second, fmt.Sprintf("--catchup-timeout %s: want at least 10s", o.CatchUpTimeout)},
	}
	for _, c := range checks {
		if c.bad {
			return fmt.Errorf("%s", c.msg)
		}
	}
	for _, m := range o.Modes {
		if m.Engine() != o.kind() {
			return fmt.Errorf("--modes: %s is a %s mode, and --engine is %s", m.Name(), m.Engine().Title(), o.kind())
		}
	}
	if err := checkGalera(o); err != nil {
		return err
	}
	for _, t := range o.Threads {
		if t < 1 || t > 1024 {
			return fmt.Errorf("--threads: %d is not a thread count; want 1..1024", t)
		}
	}
	for _, r := range o.RTTs {
		if r < 0 || r > 10*time.Second {
			return fmt.Errorf("--rtts: %s is not a round trip; want 0..10s", r)
		}
	}
	return nil
}

// Estimate is how long the points take (warm-up, measurement, the driver's start and the
// catch-up and check after each), for the CLI's "about N minutes".
func (o Options) Estimate() time.Duration {
	n := len(o.RTTs) * len(o.Modes) * len(o.Threads)
	return time.Duration(n) * (o.Warmup + o.Duration + 5*time.Second)
}
