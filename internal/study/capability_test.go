package study

import (
	"slices"
	"testing"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/execx"
	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/pgbench"
)

// stateLab is a lab known only by its state, as `wirelab down` finds one: enough for the
// capabilities that read where its hosts and helpers are.
func stateLab(outside *lab.Outside) *labBackend {
	st := &lab.State{RunID: "abc123", TempDir: "/tmp/wirelab-abc123-x", Cgroup: "/sys/fs/cgroup/wirelab-abc123",
		Namespaces: map[string]string{lab.Client: "wl-abc123-client", lab.Server: "wl-abc123-server"},
		Procs: []lab.Proc{{Name: "tunnel-exit", Host: lab.Server, Pid: 11}, {Name: "socat-1", Host: lab.Client, Pid: 12},
			{Name: "tunnel-entry", Host: lab.Client, Pid: 13}},
		Outside: outside}
	return &labBackend{l: lab.Attach(st, lab.Options{}), hosts: []string{lab.Client, lab.Server}}
}

func TestLabPlacesPgbenchInTheHostAndTheLabsCgroup(t *testing.T) {
	b := stateLab(nil)
	o := b.PgbenchIn(lab.Client, pgbench.Options{Builtin: pgbench.TPCB, Clients: 4})
	if o.NS != "wl-abc123-client" || o.Cgroup != "/sys/fs/cgroup/wirelab-abc123" || o.Clients != 4 {
		t.Errorf("pgbench in the client host: %+v", o)
	}
}

func TestLabRunsOutsideTheWireInItsCgroupAndDirectory(t *testing.T) {
	l, ok := stateLab(&lab.Outside{Local: true}).OutsideLauncher().(execx.Local)
	if !ok || l.NS != "" || l.Cgroup != "/sys/fs/cgroup/wirelab-abc123" || l.Dir != "/tmp/wirelab-abc123-x" {
		t.Errorf("launcher outside the wire: %#v", l)
	}
	if !stateLab(&lab.Outside{Local: true}).OutsideLocal() || stateLab(&lab.Outside{Via: "eth0"}).OutsideLocal() ||
		stateLab(nil).OutsideLocal() {
		t.Error("OutsideLocal is true only for a server on this machine")
	}
}

func TestHelperPidsAreTheBackendsNamedHelpers(t *testing.T) {
	e := &Env{Backend: stateLab(nil)}
	if got := e.helperPids("tunnel-entry", "tunnel-exit"); !slices.Equal(got, []int{11, 13}) {
		t.Errorf("tunnel ends' pids = %v, want [11 13]", got)
	}
	// A backend that records no helpers (HelperLister) has none to count.
	if got := (&Env{Backend: &helperBackend{}}).helperPids("tunnel-exit"); got != nil {
		t.Errorf("a backend without helper records: %v", got)
	}
}

func TestPgbenchNeedsABackendWhoseHostsRunIt(t *testing.T) {
	e := &Env{Backend: &helperBackend{}}
	if err := (pgbenchDriver{scale: 1}).Prepare(t.Context(), e, engine.Conn{}, lab.Server); err != errPgbenchLabOnly {
		t.Errorf("prepare on a backend without PgbenchHost: %v", err)
	}
	if _, err := (pgbenchDriver{scale: 1}).Run(t.Context(), e, LoadCell{ClientHost: lab.Client}, nil); err != errPgbenchLabOnly {
		t.Errorf("run on a backend without PgbenchHost: %v", err)
	}
}
