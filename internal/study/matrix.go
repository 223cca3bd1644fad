package study

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/metrics"
	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/sysbench"
)

// SysbenchCell is one point of a closed-loop sysbench study: what is varied and how
// sysbench reaches the server.
type SysbenchCell struct {
	Study, Series string
	Workload      string
	Threads       int
	Duration      time.Duration // measured part
	Warmup        time.Duration // run before the measured part, dropped from averages
	Compression   bool
	TLS           bool
	Transport     string // tcp (across the wire), socket, local-tcp, remote-socket
	Channel       string // direct, tunnel
	ClientHost    string // host sysbench runs in: lab.Client or lab.Server
	Host          string // TCP target ("" with Socket)
	Port          int
	Socket        string
	Extra         []string // extra sysbench flags (workload knobs)
	Repeat        int
	Link          *link.Condition // the wire this cell needs; nil = the study's
}

// Wire is the wire the cell needs.
func (c SysbenchCell) Wire() *link.Condition { return c.Link }

// Label names the cell in progress lines.
func (c SysbenchCell) Label() string { return fmt.Sprintf("%s threads=%d", c.Series, c.Threads) }

// Expected is how long the cell should take: warm-up, measurement and sysbench's start.
func (c SysbenchCell) Expected() time.Duration { return c.Warmup + c.Duration + 2*time.Second }

// matrix walks a fixed list of cells and measures each as a closed loop. The run,
// bandwidth and transport studies embed it.
type matrix struct {
	cells     []SysbenchCell
	next      int
	randType  string
	tables    int
	tableSize int
}

// Next returns the cells in order.
func (m *matrix) Next([]result.Point) (Cell, bool) {
	if m.next >= len(m.cells) {
		return nil, false
	}
	m.next++
	return m.cells[m.next-1], true
}

// Total is the number of cells.
func (m *matrix) Total() int { return len(m.cells) }

// Remaining is the expected time of the cells not yet measured.
func (m *matrix) Remaining() time.Duration {
	var d time.Duration
	for _, c := range m.cells[m.next:] {
		d += c.Expected()
	}
	return d
}

// Estimate is the expected time of every cell, for the CLI's "about N minutes".
func (m *matrix) Estimate() time.Duration {
	var d time.Duration
	for _, c := range m.cells {
		d += c.Expected()
	}
	return d.Round(time.Second)
}

// Finish adds nothing: the report's findings speak for a matrix.
func (m *matrix) Finish(*result.Run) {}

// Teardown has nothing to stop: every helper a matrix study starts is a lab process.
func (m *matrix) Teardown() {}

// Measure runs one cell: sysbench for warm-up + duration with per-second reports, the
// wire and CPU sampler alongside, and returns the point with its series, its verdict and
// its per-transaction profile.
func (m *matrix) Measure(ctx context.Context, e *Env, cell Cell) (result.Point, error) {
	c, ok := cell.(SysbenchCell)
	if !ok {
		return result.Point{}, fmt.Errorf("measure: %T is not a sysbench cell", cell)
	}
	p := e.BasePoint(c.Study, c.Series)
	p.Compression, p.TLS, p.Transport, p.Channel = c.Compression, c.TLS, c.Transport, c.Channel
	p.Workload, p.Threads, p.Repeat = c.Workload, c.Threads, c.Repeat
	p.DurationS, p.WarmupS = c.Duration.Seconds(), c.Warmup.Seconds()
	srv := e.Servers[0]
	conn := srv.Conn()
	var mu sync.Mutex
	var clientPid int
	sides := Sides{
		// A tunnel end's CPU belongs to the side it runs on.
		Server: func() []int { return append(srv.Pids(), e.procPids("tunnel-exit")...) },
		Client: func() []int {
			mu.Lock()
			defer mu.Unlock()
			pids := e.procPids("tunnel-entry")
			if clientPid != 0 {
				pids = append(pids, clientPid)
			}
			return pids
		},
	}
	opts := SysbenchTo(conn, sysbench.Options{
		Workload: c.Workload, Tables: m.tables, TableSize: m.tableSize, Threads: c.Threads,
		Time: c.Warmup + c.Duration, RandType: m.randType, Host: c.Host, Port: c.Port,
		Socket: c.Socket, TLS: c.TLS, Compression: c.Compression, Extra: c.Extra,
		NS: e.Lab.State.NS(c.ClientHost), Cgroup: e.Lab.State.Cgroup,
	})
	var sb *Sysbench
	samples, _, err := e.Sampled(ctx, sides, func(ctx context.Context) error {
		var err error
		sb, err = RunSysbench(ctx, opts, func(pid int) {
			mu.Lock()
			clientPid = pid
			mu.Unlock()
		}, e)
		return err
	})
	if err != nil {
		return p, fmt.Errorf("measure %s: %w", c.Label(), err)
	}
	// A server wirelab did not start (pid 0) is not seen: its CPU is no reading.
	closedLoop(&p, c, sb, samples, srv.Pid() > 0)
	return p, nil
}

// closedLoop fills a closed-loop point from its run: the series and means, mean latency
// from Little's law (threads ÷ TPS), the bottleneck verdict and the profile. Without the
// server's CPU (serverSeen false) the verdict cannot blame it and the point has no profile:
// a model fitted to it would take the server's work for free.
func closedLoop(p *result.Point, c SysbenchCell, sb *Sysbench, samples []metrics.Sample, serverSeen bool) {
	avg := FillSeries(p, sb.Intervals(), samples, Window{Warmup: c.Warmup, End: c.Warmup + c.Duration, Trim: true})
	if p.TPS > 0 {
		p.LatAvgMs = float64(c.Threads) / p.TPS * 1000
	}
	if sum := sb.Summary; sum != nil {
		p.Errors, p.Reconnects = sum.Errors, sum.Reconnects
		if len(sb.Intervals()) == 0 { // a run too short for interval lines: the summary
			p.TPS, p.QPS, p.LatAvgMs, p.LatP95Ms = sum.TPS, sum.QPS, sum.LatAvg, sum.LatPct
		}
	}
	rate := p.LinkRateBps
	p.Bottleneck, p.BottleneckWhy = metrics.Verdict(metrics.VerdictInput{
		UpUtil: metrics.Utilization(p.WireBytesPerSUp, rate), DownUtil: metrics.Utilization(p.WireBytesPerSDown, rate),
		CPUServer: p.CPUServer, CPUClient: p.CPUClient,
		// The machine's CPU, not only the lab's processes: the kernel's veth and
		// forwarding work (softirq) is part of the lab's cost. This assumes a quiet
		// machine; the session notes the load average it started under.
		CPUTotal: avg.CPUMachine, CPUs: runtime.NumCPU(), RateBps: rate, ServerCPUUnknown: !serverSeen,
	})
	if serverSeen {
		p.Profile = result.NewProfile(p, avg.UpPkts, avg.DownPkts, avg.CPUMachine, runtime.NumCPU())
	}
	if p.TPS == 0 && p.Errors > 0 {
		p.Failed, p.FailReason = true, fmt.Sprintf("no transaction completed, %d errors", p.Errors)
	}
}

// tcpCell is a cell with sysbench in the client host reaching the server across the wire:
// the server host's address, or an existing server's own (the lab routes the client's
// traffic there across the wire and through the server host).
func (b Bench) tcpCell(c SysbenchCell) SysbenchCell {
	c.Transport, c.Channel, c.ClientHost = "tcp", ChannelDirect, lab.Client
	c.Host, c.Port = lab.HostAddr[lab.Server], b.port()
	if b.Existing != nil {
		c.Host = b.Existing.Conn().Host
	}
	return c
}
