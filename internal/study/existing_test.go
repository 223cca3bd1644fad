package study

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/metrics"
	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/sysbench"
)

func existingBench() Bench {
	x := engine.UncheckedExternal(engine.ExternalConfig{
		DSN: engine.DSN{User: "bench", Host: "db.example", Port: 3307, DB: "wl"}, IP: "198.18.250.1"}, "10.11.19-MariaDB")
	return Bench{Workload: "oltp_read_only", Threads: []int{1, 4}, Duration: time.Second, Tables: 2, TableSize: 10, Existing: x}
}

// sysbench dials the existing server's own address, and the lab routes the server host to it.
func TestRunOnAnExistingServer(t *testing.T) {
	b := existingBench()
	r := NewRun(RunOptions{Bench: b, Link: link.Condition{RateBps: 20_000_000}})
	e := &Env{Servers: []engine.Server{b.Existing}}
	for _, c := range r.cells {
		if c.target(e) != "198.18.250.1" || c.Port != 3307 || c.ClientHost != lab.Client || c.Transport != "tcp" {
			t.Errorf("cell %+v: want the client host dialling 198.18.250.1:3307", c)
		}
	}
	needs := r.Needs()
	if needs.Servers[0].Existing == nil {
		t.Fatal("needs start a server instead of using the existing one")
	}
	if o := outside(needs); o == nil || *o != (lab.Target{Addr: "198.18.250.1", Port: 3307}) {
		t.Errorf("outside %+v", o)
	}
	if o := outside(NewRun(RunOptions{Bench: Bench{Threads: []int{1}}}).Needs()); o != nil {
		t.Errorf("a lab server needs no way out: %+v", o)
	}
}

// Without the server's CPU a quiet point is not called "latency", and has no profile.
func TestClosedLoopWithTheServerUnseen(t *testing.T) {
	c := LoadCell{Threads: 1, Duration: 3 * time.Second}
	var ivs []sysbench.Interval
	var ss []metrics.Sample
	for i := 1; i <= 3; i++ {
		ivs = append(ivs, sysbench.Interval{T: float64(i), TPS: 100, QPS: 1600})
		ss = append(ss, metrics.Sample{UpBytesPerS: 1e5, DownBytesPerS: 5e5, CPUClient: 0.2, CPUTotal: 0.5})
	}
	p := result.Point{LinkRateBps: 20_000_000, Threads: 1}
	closedLoop(&p, c, NewSysbench(ivs, nil).Load(), ss, false, result.Cores{Shared: 2}, 1)
	if p.Bottleneck != metrics.LatencyOrServer || !strings.Contains(p.BottleneckWhy, "server CPU not measured") {
		t.Errorf("verdict %q (%s)", p.Bottleneck, p.BottleneckWhy)
	}
	if p.Profile != nil {
		t.Errorf("profile %+v for a point without the server's CPU", p.Profile)
	}
}

func TestExistingNoteSaysWhatIsNotMeasured(t *testing.T) {
	x := existingBench().Existing
	local := existingNote(x, true, []string{"sbtest1", "sbtest2"})
	for _, want := range []string{"bench@tcp(db.example:3307)/wl", "not started by wirelab", "CPU is not measured",
		"includes it", "sbtest1, sbtest2 in wl", "drops what it created"} {
		if !strings.Contains(local, want) {
			t.Errorf("note lacks %q: %s", want, local)
		}
	}
	if remote := existingNote(x, false, nil); !strings.Contains(remote, "another machine") {
		t.Errorf("remote note: %s", remote)
	}
}

// remoteServer is a server on a real host as the remote backend returns it: its address
// and port are known once it runs.
type remoteServer struct{ conn engine.Conn }

func (s remoteServer) Kind() engine.Kind                         { return s.conn.Engine }
func (s remoteServer) Conn() engine.Conn                         { return s.conn }
func (remoteServer) Pid() int                                    { return 7001 }
func (remoteServer) Pids() []int                                 { return []int{7001} }
func (remoteServer) Version() string                             { return "PostgreSQL 15.18" }
func (remoteServer) Facts(context.Context) (engine.Facts, error) { return engine.Facts{}, nil }
func (remoteServer) Stop(context.Context) error                  { return nil }

// The run's cells dial the server's own address and port: a real host's PostgreSQL
// listens on wirelab's private port, not the engine's usual 5432.
func TestCellsDialTheServersOwnPort(t *testing.T) {
	r := NewRun(RunOptions{Bench: Bench{Workload: "oltp_read_only", Threads: []int{1, 4}, Duration: time.Second,
		Tables: 1, TableSize: 10, Engine: engine.Postgres}})
	e := &Env{Servers: []engine.Server{remoteServer{engine.Conn{Engine: engine.Postgres, Host: "198.18.21.2", Port: 15432}}}}
	for _, c := range r.cells {
		if c.target(e) != "198.18.21.2" || c.port(e) != 15432 {
			t.Errorf("cell %+v dials %s:%d, want 198.18.21.2:15432", c, c.target(e), c.port(e))
		}
	}
	// A cell that names its own address (a tunnel's entry) keeps its own port.
	c := LoadCell{Host: "127.0.0.1", Port: 4000}
	if c.port(e) != 4000 {
		t.Errorf("a cell with its own address dials port %d, want 4000", c.port(e))
	}
}
