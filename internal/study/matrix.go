package study

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/metrics"
	"github.com/wirelab/wirelab/internal/result"
)

// LoadCell is one point of a closed-loop study: what is varied and how the load driver
// reaches the server.
type LoadCell struct {
	Study, Series string
	Workload      string        // the load driver's workload
	Threads       int           // concurrent connections: sysbench threads, pgbench clients
	Duration      time.Duration // measured part
	Warmup        time.Duration // run before the measured part, dropped from averages
	Compression   bool
	TLS           bool
	Transport     string // tcp (across the wire), socket, local-tcp, remote-socket
	Channel       Channel
	ClientHost    string // host the load driver runs in: lab.Client or lab.Server
	Host          string // TCP target ("" with Socket)
	Port          int
	Socket        string
	Extra         []string // extra sysbench flags (workload knobs)
	RandType      string   // sysbench --rand-type
	Repeat        int
	Link          *link.Condition // the wire this cell needs; nil = the study's
}

// Wire is the wire the cell needs.
func (c LoadCell) Wire() *link.Condition { return c.Link }

// Label names the cell in progress lines.
func (c LoadCell) Label() string { return fmt.Sprintf("%s threads=%d", c.Series, c.Threads) }

// Expected is how long the cell should take: warm-up, measurement and the driver's start.
func (c LoadCell) Expected() time.Duration { return c.Warmup + c.Duration + 2*time.Second }

// matrix walks a fixed list of cells and measures each as a closed loop with its driver.
// The run, bandwidth and transport studies embed it.
type matrix struct {
	Cells[LoadCell]
	driver Driver
}

// Finish adds nothing: the report's findings speak for a matrix.
func (m *matrix) Finish(*result.Run) {}

// Teardown has nothing to stop: every helper a matrix study starts is a lab process.
func (m *matrix) Teardown() {}

// Measure runs one cell: the driver for warm-up + duration with per-second reports, the
// wire and CPU sampler alongside, and returns the point with its series, its verdict and
// its per-transaction profile.
func (m *matrix) Measure(ctx context.Context, e *Env, cell Cell) (result.Point, error) {
	c, ok := cell.(LoadCell)
	if !ok {
		return result.Point{}, fmt.Errorf("measure: %T is not a closed-loop cell", cell)
	}
	srv := e.Servers[0]
	return measureLoad(ctx, e, m.driver, c, func(client func() int) Sides {
		return Sides{
			// A tunnel end's CPU belongs to the side it runs on.
			Server: func() []int { return append(srv.Pids(), e.helperPids("tunnel-exit")...) },
			Client: func() []int {
				pids := e.helperPids("tunnel-entry")
				if pid := client(); pid != 0 {
					pids = append(pids, pid)
				}
				return pids
			},
		}
	})
}

// LoadSides says whose CPU is whose while a closed-loop cell runs; client is the load
// driver's pid once it has started (0 before).
type LoadSides func(client func() int) Sides

// MeasureLoad runs one closed-loop cell with the driver of data set d (the Session
// prepared it on e.Servers[0]) and the sides a study chooses: the sync study counts the
// primary (and the driver beside it) as the server and the replica across the wire as
// the other side. The point is filled as every closed-loop point is (closedLoop).
func MeasureLoad(ctx context.Context, e *Env, d DataSet, c LoadCell, sides LoadSides) (result.Point, error) {
	return measureLoad(ctx, e, driverFor(d), c, sides)
}

// measureLoad runs the driver for warm-up + duration with per-second reports, the wire
// and CPU sampler alongside, and returns the point with its series, its verdict and its
// per-transaction profile. On a backend with several client hosts (Fleet) a client-side
// cell runs one driver per client with its share of the threads, and the point is their
// merge with each client's own figures in p.Clients.
func measureLoad(ctx context.Context, e *Env, drv Driver, c LoadCell, sides LoadSides) (result.Point, error) {
	p := e.BasePoint(c.Study, c.Series)
	p.Compression, p.TLS, p.Transport, p.Channel = c.Compression, c.TLS, c.Transport, string(c.Channel)
	p.Workload, p.Driver, p.Threads, p.Repeat = c.Workload, drv.Name(), c.Threads, c.Repeat
	p.DurationS, p.WarmupS = c.Duration.Seconds(), c.Warmup.Seconds()
	srv := e.Servers[0]
	var mu sync.Mutex
	var clientPid int
	client := func() int {
		mu.Lock()
		defer mu.Unlock()
		return clientPid
	}
	parts, err := partsOf(e.Backend, c)
	if err != nil {
		return p, fmt.Errorf("measure %s: %w", c.Label(), err)
	}
	sd := sides(client)
	sd.Point = &p
	if sd.DriverHost == "" {
		sd.DriverHost = c.ClientHost
	}
	if len(parts) > 1 {
		var split []string
		for _, pt := range parts {
			sd.Clients = append(sd.Clients, pt.host.Role)
			split = append(split, fmt.Sprintf("%s %d", pt.host.Name, pt.threads))
		}
		e.Progressf("%d threads split among %d clients: %s", c.Threads, len(parts), strings.Join(split, ", "))
	}
	var loads []*Load
	marks := e.markDelayLines(ctx)
	var perClient [][]metrics.Sample
	samples, _, sampledAt, err := e.sampled(ctx, sd, func(ctx context.Context) error {
		var err error
		loads, err = runParts(ctx, e, drv, c, parts, func(pid int) {
			mu.Lock()
			clientPid = pid
			mu.Unlock()
		})
		return err
	}, func(s Sampler) {
		if cs, ok := s.(ClientSampler); ok {
			perClient = cs.ClientSamples()
		}
	})
	if err != nil {
		return p, fmt.Errorf("measure %s: %w", c.Label(), err)
	}
	costs := labCosts(ctx, marks, hostCores(e.Hosts))
	if len(costs) > 0 {
		p.LabCost = costs[0]
	}
	// A server wirelab did not start (pid 0) is not seen: its CPU is no reading.
	if len(parts) > 1 {
		p.Clients = clientLoads(c, parts, loads, perClient, sampledAt, e.Hosts)
		clientLabCosts(p.Clients, costs)
	}
	ld := mergeLoads(loads)
	samples, lead := alignSamples(samples, sampledAt, ld)
	p.LoadLeadS = lead.Seconds()
	closedLoop(&p, c, ld, samples, srv.Pid() > 0, cellCores(e.Cores, c), len(parts))
	e.drove = map[string]float64{c.ClientHost: p.TPS}
	if len(parts) > 1 {
		e.drove = map[string]float64{}
		for i, pt := range parts {
			e.drove[pt.host.Role] = p.Clients[i].TPS
		}
	}
	return p, nil
}

// cellCores is where a cell's sides ran: a driver on the server's own host (transport's
// socket and local-TCP paths) shares that host's cores with the server, also when the run
// has hosts of its own.
func cellCores(cores result.Cores, c LoadCell) result.Cores {
	if c.ClientHost == lab.Server && cores.Separate() {
		return result.Cores{Shared: cores.Server}
	}
	return cores
}

// closedLoop fills a closed-loop point from its run, whichever driver made it: the series
// and means, the mean latency (the driver's own over the window when it reports one each
// second, else Little's law: threads ÷ TPS), the percentiles from the driver's histogram
// of the window when it has one, the bottleneck verdict and the profile.
// Without the server's CPU (serverSeen false) the verdict cannot blame it and the point
// has no profile: a model fitted to it would take the server's work for free. A point
// whose lab cost (p.LabCost, set before) bounds it gets the lab's verdict, not a side's.
//
// cores is where the sides ran: one machine they shared, or hosts of their own, each side
// then weighed against its own host's cores; with several client hosts (p.Clients, set
// before) the client side is the busiest of them against its own cores. links is how many
// shaped links carried the load side by side (one per client host, Window.Links).
func closedLoop(p *result.Point, c LoadCell, ld *Load, samples []metrics.Sample, serverSeen bool, cores result.Cores, links int) {
	avg := FillSeries(p, ld.Ticks, samples, Window{Warmup: c.Warmup, End: c.Warmup + c.Duration, Trim: true, Links: links})
	if t := ld.Totals; t != nil {
		p.Errors, p.Reconnects = t.Errors, t.Reconnects
		if len(ld.Ticks) == 0 { // a run too short for per-second lines: the summary
			p.TPS, p.QPS, p.LatAvgMs, p.LatStddevMs, p.LatP95Ms = t.TPS, t.QPS, t.LatAvgMs, t.LatStddevMs, t.LatP95Ms
		}
		if t.Histogram != nil {
			p.SetLatency(*t.Histogram, t.LatMaxMs)
		}
	}
	if p.LatAvgMs == 0 && p.TPS > 0 {
		p.LatAvgMs = float64(c.Threads) / p.TPS * 1000
	}
	judge(p, avg, serverSeen, cores, links)
	if p.TPS == 0 && p.Errors > 0 {
		p.Failed, p.FailReason = true, fmt.Sprintf("no transaction completed, %d errors", p.Errors)
	}
}

// judge gives a point whose series and means are filled (FillSeries, avg its other means)
// its bottleneck verdict and, where the server's CPU was seen, its per-transaction
// profile: the one place every point, closed loop or not, is judged. cores and links are
// closedLoop's.
func judge(p *result.Point, avg Averages, serverSeen bool, cores result.Cores, links int) {
	rate := p.LinkRateBps * int64(max(links, 1)) // each client host's link has the rate
	// Several client hosts (p.Clients): the client side is the busiest of them against its
	// own cores, not their sum against all of theirs.
	cpuClient, clientCores := p.CPUClient, cores.Client
	busiest, split := result.BusiestClient(p.Clients)
	if split && cores.Separate() {
		cpuClient, clientCores = busiest.CPUClient, busiest.Cores
	}
	p.Bottleneck, p.BottleneckWhy = metrics.Verdict(metrics.VerdictInput{
		UpUtil: metrics.Utilization(p.WireBytesPerSUp, rate), DownUtil: metrics.Utilization(p.WireBytesPerSDown, rate),
		CPUServer: p.CPUServer, CPUClient: cpuClient,
		// The machine's CPU, not only the lab's processes: the kernel's veth and
		// forwarding work (softirq) is part of the lab's cost. This assumes a quiet
		// machine; the session notes the load average it started under.
		CPUTotal: avg.CPUMachine, CPUs: cores.Machine(), RateBps: rate, ServerCPUUnknown: !serverSeen,
		ServerCPUs: cores.Server, ClientCPUs: clientCores,
		LabBound: p.LabCost != nil && p.LabCost.LabBound, LabShare: labCostShare(p.LabCost),
		LabOnClientHost: p.LabCost != nil && p.LabCost.Host != "",
	})
	if split && cores.Separate() {
		p.BottleneckWhy += fmt.Sprintf("; client side: %s, the busiest of %d client hosts", busiest.Host, len(p.Clients))
	}
	if serverSeen {
		// The delay line's own CPU is the lab's, not the workload's: a profile carried to
		// another machine (predict) leaves it out.
		lab := labShare(p.LabCost) * float64(cores.Machine())
		p.Profile = result.NewProfile(p, avg.UpPkts, avg.DownPkts, max(avg.CPUMachine-lab, 0), cores.Machine())
		if p.Profile != nil {
			p.Profile.LabCPUS = lab / p.TPS
			if cores.Separate() {
				p.Profile.ServerCores, p.Profile.ClientCores = cores.Server, cores.Client
			}
		}
	}
}

// tcpCell is a cell with the driver in the client host reaching the server across the
// wire, at the server's own TCP address (Host ""): the lab server host's, an existing
// server's (the lab routes the client's traffic there across the wire and through the
// server host) or a real server host's, known once the server runs.
func (b Bench) tcpCell(c LoadCell) LoadCell {
	c.Transport, c.Channel, c.ClientHost = "tcp", ChannelDirect, lab.Client
	c.Host, c.Port = "", b.port()
	return c
}

// target is where the cell's driver connects over TCP: the cell's host, or the first
// server's own address when the cell leaves it to the server ("" and no socket).
func (c LoadCell) target(e *Env) string {
	if c.Host == "" && c.Socket == "" && len(e.Servers) > 0 {
		return e.Servers[0].Conn().Host
	}
	return c.Host
}

// port is the cell's TCP port, or the first server's own when the cell leaves the
// address to the server: a real server host's port is known once the server runs.
func (c LoadCell) port(e *Env) int {
	if c.Host == "" && c.Socket == "" && len(e.Servers) > 0 {
		return e.Servers[0].Conn().Port
	}
	return c.Port
}

// labCostShare is the share of its machine the lab's delay line took, 0 without one.
func labCostShare(c *result.LabCost) float64 {
	if c == nil {
		return 0
	}
	return c.MachineShare
}

// labShare is the lab's own share of the machine whose CPU the point's profile counts: 0
// without a delay line, or where it ran on a client host of its own (real hosts: the
// machine counted is the server's).
func labShare(c *result.LabCost) float64 {
	if c == nil || c.Host != "" {
		return 0
	}
	return c.MachineShare
}
