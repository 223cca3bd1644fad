package study

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/hostinfo"
	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/metrics"
	"github.com/wirelab/wirelab/internal/report"
	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/sysbench"
)

// agentFacts is what a host's `wirelab agent facts` prints for a fixture machine, read
// back as the remote backend reads it.
func agentFacts(t *testing.T, fixture string, cores int, role, name string) result.Host {
	t.Helper()
	dir := filepath.Join("..", "hostinfo", "testdata", fixture)
	h, err := hostinfo.Read(hostinfo.Paths{Proc: filepath.Join(dir, "proc"), Sys: filepath.Join(dir, "sys")}, cores)
	if err != nil {
		t.Fatal(err)
	}
	line, err := hostinfo.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	if h, err = hostinfo.Parse(line); err != nil {
		t.Fatal(err)
	}
	h.Role, h.Name = role, name
	return h
}

// A --hosts run with a 48-core server host and a 2-core client host: the environment and
// the report list each host's cores and CPU, and the verdict weighs the server's 1.9 cores
// against the server host's 48, the client's against the client host's 2. The same
// readings on the lab's shared 2-core machine are a CPU-bound server.
func TestVerdictAndReportUseEachHostsOwnCores(t *testing.T) {
	hs := []result.Host{agentFacts(t, "epyc2", 2, "client", "app1"), agentFacts(t, "xeon48", 48, "server", "db1")}
	c := LoadCell{Threads: 16, Duration: 3 * time.Second}
	var ivs []sysbench.Interval
	var ss []metrics.Sample
	for i := 1; i <= 3; i++ {
		ivs = append(ivs, sysbench.Interval{T: float64(i), TPS: 1000, QPS: 14000, LatPct: 20})
		ss = append(ss, metrics.Sample{T: time.Duration(i) * time.Second, UpBytesPerS: 1e6, DownBytesPerS: 5e6,
			CPUServer: 1.9, CPUClient: 0.4, CPUTotal: 2.0})
	}
	measure := func(cores result.Cores) result.Point {
		p := result.Point{Study: "run", Series: "unlimited", Threads: 16}
		closedLoop(&p, c, NewSysbench(ivs, nil).Load(), ss, true, cores, 1)
		return p
	}
	if lab := measure(result.Cores{Shared: 2}); lab.Bottleneck != "server-cpu" {
		t.Fatalf("the shared 2-core machine: %q (%s), want server-cpu", lab.Bottleneck, lab.BottleneckWhy)
	}
	cores := result.HostCores(hs)
	if !cores.Separate() || cores.Server != 48 || cores.Client != 2 {
		t.Fatalf("HostCores = %+v", cores)
	}
	p := measure(cores)
	if p.Bottleneck != "latency" || !strings.Contains(p.BottleneckWhy, "of 48 server-host cores") ||
		!strings.Contains(p.BottleneckWhy, "client 0.40 of 2 client-host cores") {
		t.Errorf("verdict %q (%s): want latency, weighed on each host's own cores", p.Bottleneck, p.BottleneckWhy)
	}
	if pr := p.Profile; pr == nil || pr.Cores != 48 || pr.ServerCores != 48 || pr.ClientCores != 2 {
		t.Errorf("profile %+v: want the server host's 48 cores and each side's", pr)
	}

	env := environment(context.Background(), WireState{Shaper: "htb"}, link.Condition{}, DataSet{}, hs)
	if env.CPUs != 48 || !strings.Contains(env.CPUModel, "Xeon") || len(env.Hosts) != 2 {
		t.Errorf("environment: %d CPUs of %q, %d hosts; want the server host's and both hosts", env.CPUs, env.CPUModel, len(env.Hosts))
	}
	run := &result.Run{Schema: result.Schema, Tool: "wirelab", Study: "run", RunID: "h1", Environment: env,
		Spec: result.Spec{Workload: "oltp_read_only", Threads: []int{16}, DurationS: 3}, Points: []result.Point{p}}
	blocks, err := report.Build(run)
	if err != nil {
		t.Fatal(err)
	}
	md := report.Markdown(blocks)
	for _, want := range []string{
		"| server host db1 | 48 cores × Intel(R) Xeon(R) Gold 6248R CPU @ 3.00GHz, 188.4 GiB, kernel 6.1.0-28-amd64, clock tsc |",
		"| client host app1 | 2 cores × AMD EPYC, 23.5 GiB, kernel 6.18.44-fc-v669, clock tsc |",
		"latency",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "| CPUs |") {
		t.Errorf("a --hosts report must not name one machine's CPUs:\n%s", md)
	}
}
