package study

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"runtime"
	"sync"
	"time"

	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/metrics"
	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/sysbench"
)

// Cell is one point of a study matrix: what is varied and how sysbench reaches the server.
type Cell struct {
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
}

// Engine measures cells on one lab whose server is up and prepared.
type Engine struct {
	Lab       *lab.Lab
	Tables    int
	TableSize int
	RandType  string
	Logger    *slog.Logger
	Self      string            // the wirelab binary (the nfqueue delayer runs from it)
	WireCheck *result.WireCheck // the last link check, recorded on every point
}

// Measure runs one cell: sysbench for warm-up + duration with per-second reports, the
// wire and CPU sampler alongside, and returns the point with its per-second series.
func (e *Engine) Measure(ctx context.Context, c Cell) (result.Point, error) {
	st := e.Lab.State
	db := st.DB
	if db == nil {
		return result.Point{}, fmt.Errorf("measure %s t%d: the lab has no MariaDB", c.Series, c.Threads)
	}
	var mu sync.Mutex
	var clientPid int
	src := metrics.Source{
		WireNS:    st.NS(lab.Wire),
		UpIface:   st.WireIfaces[lab.Server],
		DownIface: st.WireIfaces[lab.Client],
		// A tunnel end's CPU belongs to the side it runs on.
		ServerPIDs: func() []int {
			return procPids(st, "mariadbd-"+lab.Server, "tunnel-exit")
		},
		ClientPIDs: func() []int {
			mu.Lock()
			defer mu.Unlock()
			pids := procPids(st, "tunnel-entry")
			if clientPid != 0 {
				pids = append(pids, clientPid)
			}
			return pids
		},
	}
	sampler := metrics.NewSampler(src, time.Second, e.Logger)
	if err := sampler.Start(ctx); err != nil {
		return result.Point{}, fmt.Errorf("measure %s t%d: start sampler: %w", c.Series, c.Threads, err)
	}
	opts := sysbench.Options{
		Workload: c.Workload, Tables: e.Tables, TableSize: e.TableSize, Threads: c.Threads,
		Time: c.Warmup + c.Duration, RandType: e.RandType, Host: c.Host, Port: c.Port,
		Socket: c.Socket, User: db.User, Password: db.Password, DB: db.Name, TLS: c.TLS,
		Compression: c.Compression, CertDir: db.CertDir, ReportInterval: 1, Extra: c.Extra,
		NS: st.NS(c.ClientHost), Cgroup: st.Cgroup, // the lab's: its teardown stops sysbench whatever happens to us
		OnStart: func(pid int) {
			mu.Lock()
			clientPid = pid
			mu.Unlock()
		},
	}
	var intervals []sysbench.Interval
	sum, runErr := sysbench.Run(ctx, opts, func(iv sysbench.Interval) { intervals = append(intervals, iv) }, e.Logger)
	samples := sampler.Stop()
	p := e.basePoint(c)
	if runErr != nil {
		return p, fmt.Errorf("measure %s t%d: %w", c.Series, c.Threads, runErr)
	}
	fillPoint(&p, c, sum, intervals, samples, st.Condition.RateBps)
	return p, nil
}

func (e *Engine) basePoint(c Cell) result.Point {
	cond := e.Lab.State.Condition
	return result.Point{
		Study: c.Study, Series: c.Series, LinkRateBps: cond.RateBps,
		LinkDelayMs:  float64(cond.Delay) / float64(time.Millisecond),
		LinkJitterMs: float64(cond.Jitter) / float64(time.Millisecond), LinkLossPct: cond.LossPct,
		Compression: c.Compression, TLS: c.TLS, Transport: c.Transport, Channel: c.Channel,
		Workload: c.Workload, Threads: c.Threads, Repeat: c.Repeat,
		DurationS: c.Duration.Seconds(), WarmupS: c.Warmup.Seconds(), WireCheck: e.WireCheck,
	}
}

// fillPoint turns sysbench's per-second lines and the sampler's samples into the point's
// averages. Seconds whose end falls inside the warm-up are kept in the series (flagged) but
// dropped from every average. lat_avg_ms follows from Little's law for a closed loop
// (threads ÷ TPS); lat_p95_ms is the mean of sysbench's per-second 95th percentiles.
func fillPoint(p *result.Point, c Cell, sum *sysbench.Summary, ivs []sysbench.Interval, ss []metrics.Sample, rateBps int64) {
	warm := c.Warmup.Seconds()
	// sysbench keeps reporting while threads finish their last queries after --time (a
	// loaded 2-core box took 10.5 s for --time=5): those seconds are not the point.
	end := (c.Warmup + c.Duration).Seconds()
	for len(ivs) > 0 && ivs[len(ivs)-1].T > end+1e-9 {
		ivs = ivs[:len(ivs)-1]
	}
	if len(ss) > len(ivs) && len(ivs) > 0 {
		ss = ss[:len(ivs)]
	}
	n := max(len(ivs), len(ss))
	var tps, qps, p95, up, down, cs, cc, total, pktUp, pktDown []float64
	for i := 0; i < n; i++ {
		s := result.Second{T: float64(i + 1)}
		if i < len(ivs) {
			iv := ivs[i]
			s.T, s.TPS, s.QPS, s.LatP95Ms, s.Errors, s.Reconnects = iv.T, iv.TPS, iv.QPS, iv.LatPct, iv.Errors, iv.Reconnects
		}
		if i < len(ss) {
			sm := ss[i]
			s.WireUpBps, s.WireDownBps, s.CPUServer, s.CPUClient = sm.UpBytesPerS, sm.DownBytesPerS, sm.CPUServer, sm.CPUClient
		}
		s.Warmup = s.T <= warm+1e-9
		p.Seconds = append(p.Seconds, s)
		if s.Warmup {
			continue
		}
		if i < len(ivs) {
			tps, qps, p95 = append(tps, s.TPS), append(qps, s.QPS), append(p95, s.LatP95Ms)
		}
		if i < len(ss) {
			up, down = append(up, s.WireUpBps), append(down, s.WireDownBps)
			cs, cc = append(cs, s.CPUServer), append(cc, s.CPUClient)
			total = append(total, ss[i].CPUTotal)
			pktUp, pktDown = append(pktUp, ss[i].UpPktsPerS), append(pktDown, ss[i].DownPktsPerS)
		}
	}
	p.TPS, p.QPS, p.LatP95Ms, p.TPSCV = metrics.Mean(tps), metrics.Mean(qps), metrics.Mean(p95), metrics.CV(tps)
	if p.TPS > 0 {
		p.LatAvgMs = float64(c.Threads) / p.TPS * 1000
	}
	if sum != nil {
		p.Errors, p.Reconnects = sum.Errors, sum.Reconnects
		if len(tps) == 0 { // a run too short for interval lines: fall back on the summary
			p.TPS, p.QPS, p.LatAvgMs, p.LatP95Ms = sum.TPS, sum.QPS, sum.LatAvg, sum.LatPct
		}
	}
	p.WireBytesPerSUp, p.WireBytesPerSDown = metrics.Mean(up), metrics.Mean(down)
	p.CPUServer, p.CPUClient = metrics.Mean(cs), metrics.Mean(cc)
	upU := metrics.Utilization(p.WireBytesPerSUp, rateBps)
	downU := metrics.Utilization(p.WireBytesPerSDown, rateBps)
	p.LinkUtilization = math.Max(upU, downU)
	p.Bottleneck, p.BottleneckWhy = metrics.Verdict(metrics.VerdictInput{
		UpUtil: upU, DownUtil: downU, CPUServer: p.CPUServer, CPUClient: p.CPUClient,
		// The machine's CPU, not only the lab's processes: the kernel's veth and
		// forwarding work (softirq) is part of the lab's cost. This assumes a quiet
		// machine; the session notes the load average it started under.
		CPUTotal: metrics.Mean(total), CPUs: runtime.NumCPU(), RateBps: rateBps,
	})
	p.Profile = result.NewProfile(p, metrics.Mean(pktUp), metrics.Mean(pktDown), metrics.Mean(total), runtime.NumCPU())
	if p.TPS == 0 && p.Errors > 0 {
		p.Failed, p.FailReason = true, fmt.Sprintf("no transaction completed, %d errors", p.Errors)
	}
}

func procPids(st *lab.State, names ...string) []int {
	var out []int
	for _, p := range st.Procs {
		for _, n := range names {
			if p.Name == n {
				out = append(out, p.Pid)
			}
		}
	}
	return out
}
