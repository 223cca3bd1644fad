package syncrep

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/galera"
)

func TestParseModes(t *testing.T) {
	cases := []struct {
		in      string
		k       engine.Kind
		want    []string
		wantErr string
	}{
		{"async,semisync-after-sync,semisync-after-commit", engine.MariaDB, []string{"async", "semisync-after-sync", "semisync-after-commit"}, ""},
		// The control is added first: every finding compares with it.
		{"semisync-after-commit", engine.MariaDB, []string{"async", "semisync-after-commit"}, ""},
		{"pg-on, pg-remote-apply", engine.Postgres, []string{"pg-local", "pg-on", "pg-remote-apply"}, ""},
		{"pg-on", engine.MariaDB, nil, "pg-on is a PostgreSQL mode, not a MariaDB one"},
		{"semisync-after-sync", engine.Postgres, nil, "is a MariaDB mode"},
		{"galera", engine.MariaDB, []string{"async", "galera"}, ""},
		{"galera-tuned,async", engine.MariaDB, []string{"galera-tuned", "async"}, ""},
		{"galera", engine.Postgres, nil, "galera is a MariaDB mode, not a PostgreSQL one"},
		{"async,async", engine.MariaDB, nil, "async appears twice"},
		{"", engine.MariaDB, nil, "--modes is empty"},
		{"sync", engine.MariaDB, nil, `unknown mode "sync"`},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			ms, err := ParseModes(c.in, c.k)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("ParseModes(%q) error %v, want one containing %q", c.in, err, c.wantErr)
				}
				if !strings.Contains(err.Error(), "--modes") {
					t.Errorf("error %q does not name --modes", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseModes(%q): %v", c.in, err)
			}
			if got := Names(ms); !slices.Equal(got, c.want) {
				t.Errorf("ParseModes(%q) = %v, want %v", c.in, got, c.want)
			}
		})
	}
	if _, err := ParseModes("nope", engine.MariaDB); !errors.Is(err, ErrUnknownMode) {
		t.Errorf("unknown mode error %v is not ErrUnknownMode", err)
	}
}

// Every engine has exactly one control, and every registered mode name is a series the
// issue's vocabulary knows.
func TestRegistry(t *testing.T) {
	for _, k := range []engine.Kind{engine.MariaDB, engine.Postgres} {
		n := 0
		for _, m := range ModesFor(k) {
			if m.Control() {
				n++
				if m.Waits() {
					t.Errorf("control %s waits for the replica", m.Name())
				}
			}
		}
		if n != 1 {
			t.Errorf("%s has %d controls, want 1", k, n)
		}
	}
	want := []string{"async", "semisync-after-sync", "semisync-after-commit", "pg-off", "pg-local", "pg-remote-write", "pg-on", "pg-remote-apply", "galera", "galera-tuned"}
	if got := Names(modes); !slices.Equal(got, want) {
		t.Errorf("modes = %v, want %v", got, want)
	}
	// MariaDB's modes include the Galera ones: --modes "" (and --quick) runs all of them.
	if got, want := Names(ModesFor(engine.MariaDB)), []string{"async", "semisync-after-sync", "semisync-after-commit", "galera", "galera-tuned"}; !slices.Equal(got, want) {
		t.Errorf("ModesFor(mariadb) = %v, want %v", got, want)
	}
}

// Galera modes are MariaDB's, wait for the node across the wire, and name the
// cluster presets' series.
func TestGaleraModes(t *testing.T) {
	for _, name := range []string{"galera", "galera-tuned"} {
		m, ok := lookup(name)
		if !ok {
			t.Fatalf("%s not registered", name)
		}
		g := m.(galeraMode)
		if m.Engine() != engine.MariaDB || m.Control() || !m.Waits() {
			t.Errorf("%s: engine %s control %v waits %v", name, m.Engine(), m.Control(), m.Waits())
		}
		o := g.options(20 * time.Millisecond)
		if o.Series() != name || o.MaxRTT != 20*time.Millisecond {
			t.Errorf("%s: options %+v (series %s)", name, o, o.Series())
		}
		if err := m.Apply(context.Background(), &Target{}); err == nil {
			t.Errorf("%s: Apply without a cluster succeeded", name)
		}
	}
}

// The sweep's RTT plus twice the jitter must fit the cluster's timeouts, checked with
// the other options, naming --rtts.
func TestValidateGaleraRTT(t *testing.T) {
	o := validOptions()
	o.Modes, _ = ParseModes("galera,galera-tuned", engine.MariaDB)
	if err := o.Validate(); err != nil {
		t.Fatalf("galera at 100ms: %v", err)
	}
	o.RTTs = []time.Duration{0, 4900 * time.Millisecond}
	o.SemiSyncTimeout = time.Hour
	o.Link.Jitter = 100 * time.Millisecond
	err := o.Validate()
	if err == nil || !strings.Contains(err.Error(), "--rtts 0s,4.9s") || !errors.Is(err, galera.ErrBadOptions) {
		t.Errorf("4.9s + 2×100ms jitter: Validate() = %v, want a --rtts error wrapping galera.ErrBadOptions", err)
	}
	o.Link.Jitter = 0
	if err := o.Validate(); err != nil {
		t.Errorf("4.9s without jitter: %v", err)
	}
}

// Galera modes come after every Pair mode, each mode's RTTs together (one cluster each).
func TestCellsOrderGalera(t *testing.T) {
	o := validOptions()
	o.Modes, _ = ParseModes("galera-tuned,async,galera", engine.MariaDB)
	o.Threads = []int{1}
	s := New(o)
	var labels []string
	for {
		c, ok := s.Next(nil)
		if !ok {
			break
		}
		labels = append(labels, c.Label())
	}
	want := []string{"async rtt=0s threads=1", "async rtt=100ms threads=1",
		"galera-tuned rtt=0s threads=1", "galera-tuned rtt=100ms threads=1",
		"galera rtt=0s threads=1", "galera rtt=100ms threads=1"}
	if !slices.Equal(labels, want) {
		t.Errorf("order %v, want %v", labels, want)
	}
}

func validOptions() Options {
	ms, _ := ParseModes("async,semisync-after-sync,semisync-after-commit", engine.MariaDB)
	return Options{Engine: engine.MariaDB, Modes: ms, Workload: "oltp_write_only", RTTs: []time.Duration{0, 100 * time.Millisecond},
		Threads: []int{1, 8}, Duration: 6 * time.Second, Warmup: 2 * time.Second, SemiSyncTimeout: time.Minute,
		Tables: 4, TableSize: 10000, BufferPool: "512M", CatchUpTimeout: time.Minute}
}

func TestValidate(t *testing.T) {
	if err := validOptions().Validate(); err != nil {
		t.Fatalf("valid options: %v", err)
	}
	cases := []struct {
		name, want string
		edit       func(o *Options)
	}{
		{"timeout not 10x the RTT", "--semisync-timeout 999ms: want at least 10 × the largest --rtts (100ms)", func(o *Options) { o.SemiSyncTimeout = 999 * time.Millisecond }},
		{"pgbench workload on mariadb", "--workload tpcb-like is a pgbench script, and pgbench drives PostgreSQL only: with --engine mariadb want one of oltp_write_only, oltp_insert, or add --engine postgres for tpcb-like, simple-update",
			func(o *Options) { o.Workload, o.Tables, o.TableSize, o.Scale = "tpcb-like", 0, 0, 1 }},
		{"unknown workload", `--workload "oltp_read_only": want one of oltp_write_only, oltp_insert (sysbench) or, with --engine postgres, tpcb-like, simple-update (pgbench)`,
			func(o *Options) { o.Workload = "oltp_read_only" }},
		{"select-only is no write workload", `--workload "select-only"`, func(o *Options) { o.Workload = "select-only" }},
		{"scale with sysbench", "--scale 10 is pgbench's data set; with --workload oltp_write_only the data set is --tables × --table-size", func(o *Options) { o.Scale = 10 }},
		{"no rtts", "--rtts is empty", func(o *Options) { o.RTTs = nil }},
		{"no threads", "--threads is empty", func(o *Options) { o.Threads = nil }},
		{"short", "--duration 1s", func(o *Options) { o.Duration = time.Second }},
		{"negative target", "--target-tps -1", func(o *Options) { o.TargetTPS = -1 }},
		{"pg mode on mariadb", "pg-on is a PostgreSQL mode, and --engine is mariadb", func(o *Options) {
			m, _ := lookup("pg-on")
			o.Modes = append(o.Modes, m)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := validOptions()
			c.edit(&o)
			if err := o.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Validate() = %v, want an error containing %q", err, c.want)
			}
		})
	}
	// Without semi-sync the timeout does not matter.
	o := validOptions()
	o.Modes = o.Modes[:1]
	o.SemiSyncTimeout = 0
	if err := o.Validate(); err != nil {
		t.Errorf("async only, no timeout: %v", err)
	}
}

func TestCellsOrder(t *testing.T) {
	o := validOptions()
	o.Link.Jitter = 5 * time.Millisecond
	s := New(o)
	if s.Total() != 2*3*2 {
		t.Fatalf("Total = %d, want 12", s.Total())
	}
	var labels []string
	for {
		c, ok := s.Next(nil)
		if !ok {
			break
		}
		labels = append(labels, c.Label())
		sc := c.(cell)
		if got := sc.Wire().RTT(); got != sc.rtt {
			t.Errorf("%s: wire RTT %s, want %s", c.Label(), got, sc.rtt)
		}
		if sc.Wire().Jitter > sc.Wire().Delay {
			t.Errorf("%s: jitter %s above the delay %s", c.Label(), sc.Wire().Jitter, sc.Wire().Delay)
		}
	}
	want := []string{"async rtt=0s threads=1", "async rtt=0s threads=8", "semisync-after-sync rtt=0s threads=1"}
	if !slices.Equal(labels[:3], want) || labels[6] != "async rtt=100ms threads=1" {
		t.Errorf("order %v: want RTT outermost, then mode, then threads", labels)
	}
}
