package metrics

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/wirelab/wirelab/internal/execx"
	"github.com/wirelab/wirelab/internal/procfs"
)

// Source says what to sample. Leave UpIface and DownIface empty to skip the wire, and a
// PIDs func nil to skip that side's CPU. A role given a feed in Feeds is read from that
// remote agent's lines instead, and must not also name local interfaces or pids.
type Source struct {
	WireNS     string       // netns name ("" = current namespace, for tests on veth/lo)
	UpIface    string       // wire iface whose TX is client->server
	DownIface  string       // wire iface whose TX is server->client
	ServerPIDs func() []int // called every sample, so pids may appear after Start
	ClientPIDs func() []int
	ProcRoot   string // "" = this machine's (procfs.DefaultRoot)
	NetnsDir   string // default "/run/netns"

	// Runner, when set, makes the wire counters come from `ip [-n WireNS] -s -j link show`
	// run through it, one process per sample. The default reads procfs from a file opened
	// once inside the namespace, which needs no process per sample.
	Runner execx.Runner

	// Feeds reads roles from agents on remote hosts (`wirelab agent sample`) instead.
	Feeds Feeds
}

// Sample is one interval: rates, not counters. T is the end of the interval, measured
// from Start; rates divide by the measured length of the interval.
type Sample struct {
	T                                                    time.Duration
	UpBytesPerS, DownBytesPerS, UpPktsPerS, DownPktsPerS float64
	CPUServer, CPUClient, CPUTotal                       float64 // cores
}

// Totals is what happened over the whole window from Start to Stop (or to the latest
// sample while running).
type Totals struct {
	Elapsed                                 time.Duration
	UpBytes, DownBytes, UpPkts, DownPkts    uint64
	CPUServerSec, CPUClientSec, CPUTotalSec float64
}

// Avg returns the window's averages as a Sample: bytes/s, packets/s and cores.
func (t Totals) Avg() Sample {
	sec := t.Elapsed.Seconds()
	if sec <= 0 {
		return Sample{}
	}
	return Sample{T: t.Elapsed,
		UpBytesPerS: float64(t.UpBytes) / sec, DownBytesPerS: float64(t.DownBytes) / sec,
		UpPktsPerS: float64(t.UpPkts) / sec, DownPktsPerS: float64(t.DownPkts) / sec,
		CPUServer: t.CPUServerSec / sec, CPUClient: t.CPUClientSec / sec, CPUTotal: t.CPUTotalSec / sec}
}

// snapshot holds cumulative values at one instant; samples are differences of snapshots.
type snapshot struct {
	at                                   time.Time
	upBytes, downBytes, upPkts, downPkts uint64
	cpuServer, cpuClient, cpuTotal       uint64 // clock ticks

	// fedAt is, for each part read from a feed, the agent's time (UnixNano) of the line
	// its values come from; 0 while the feed has no line. Local parts leave it 0.
	fedAt [nParts]int64
}

// collector fills its part of a snapshot with cumulative values. collect is called only
// from one goroutine at a time; close releases what the collector opened.
type collector interface {
	collect(*snapshot) error
	close() error
}

// Sampler samples a Source every interval between Start and Stop.
type Sampler struct {
	src      Source
	interval time.Duration
	log      *slog.Logger

	collectors []collector
	cancel     context.CancelFunc
	done       chan struct{}

	stopOnce sync.Once

	mu      sync.Mutex
	start   time.Time
	last    snapshot
	samples []Sample
	totals  Totals
	ticks   [3]uint64 // server, client, machine CPU over the window
	tck     float64   // CLK_TCK: ticks per second

	fed  [nParts]bool // parts read from feeds: their rates divide by the agent's interval
	held [nParts]bool // the latest sample repeated the part's rate for want of a new line
}

// NewSampler returns a sampler; interval <= 0 means one second, a nil logger discards.
func NewSampler(src Source, interval time.Duration, logger *slog.Logger) *Sampler {
	if interval <= 0 {
		interval = time.Second
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if src.NetnsDir == "" {
		src.NetnsDir = "/run/netns"
	}
	return &Sampler{src: src, interval: interval, log: logger.With("component", "metrics"), tck: clkTck()}
}

// Start opens every counter, takes the baseline and starts sampling. It fails early when
// the namespace or an interface is missing (ErrNetnsNotFound, ErrIfaceNotFound). Sampling
// ends at Stop or when ctx is done, whichever comes first; call Stop in both cases. The
// wire counter file, open from Start to Stop, keeps the namespace's counters readable
// even if the namespace is deleted meanwhile, so stop the sampler before lab teardown.
func (s *Sampler) Start(ctx context.Context) error {
	if s.done != nil {
		return errors.New("start metrics sampler: already started")
	}
	cs, err := s.open()
	if err != nil {
		return fmt.Errorf("start metrics sampler: %w", err)
	}
	s.collectors = cs
	base, err := s.collect()
	if err != nil {
		s.closeAll()
		return fmt.Errorf("start metrics sampler: baseline: %w", err)
	}
	s.start, s.last = base.at, base
	ctx, s.cancel = context.WithCancel(ctx)
	s.done = make(chan struct{})
	go s.loop(ctx)
	return nil
}

func (s *Sampler) open() ([]collector, error) {
	fd := s.src.Feeds
	if err := s.src.checkFeeds(); err != nil {
		return nil, err
	}
	var cs []collector
	switch {
	case fd.Wire != nil:
		cs = append(cs, s.feedCollector(fd.Wire, partWire))
	case s.src.UpIface != "" || s.src.DownIface != "":
		c, err := s.openWire()
		if err != nil {
			return nil, err
		}
		cs = append(cs, c)
	}
	switch {
	case fd.ServerCPU != nil:
		cs = append(cs, s.feedCollector(fd.ServerCPU, partServer))
	case s.src.ServerPIDs != nil:
		cs = append(cs, newProcCPUCollector(procfs.At(s.src.ProcRoot), s.src.ServerPIDs,
			func(sn *snapshot, v uint64) { sn.cpuServer = v }))
	}
	switch {
	case fd.ClientCPU != nil:
		cs = append(cs, s.feedCollector(fd.ClientCPU, partClient))
	case s.src.ClientPIDs != nil:
		cs = append(cs, newProcCPUCollector(procfs.At(s.src.ProcRoot), s.src.ClientPIDs,
			func(sn *snapshot, v uint64) { sn.cpuClient = v }))
	}
	if fd.Machine != nil {
		return append(cs, s.feedCollector(fd.Machine, partMachine)), nil
	}
	return append(cs, newMachineCPUCollector(procfs.At(s.src.ProcRoot))), nil
}

func (s *Sampler) openWire() (collector, error) {
	up, down := s.src.UpIface, s.src.DownIface
	if s.src.Runner != nil {
		return &ipLinkCollector{run: s.src.Runner, ns: s.src.WireNS, up: up, down: down}, nil
	}
	var c *netDevCollector
	if s.src.WireNS == "" {
		f, err := openFile(procfs.At(s.src.ProcRoot).Path("net", "dev"))
		if err != nil {
			return nil, err
		}
		c = &netDevCollector{f: f, up: up, down: down}
	} else {
		f, err := openInNetns(filepath.Join(s.src.NetnsDir, s.src.WireNS),
			procfs.At(s.src.ProcRoot).Path("thread-self", "net", "dev"))
		if err != nil {
			return nil, fmt.Errorf("open wire counters in %s: %w", s.src.WireNS, err)
		}
		c = &netDevCollector{f: f, up: up, down: down}
	}
	return c, nil
}

func (s *Sampler) loop(ctx context.Context) {
	defer close(s.done)
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.tick(false)
		}
	}
}

// tick takes a snapshot and records the interval since the previous one. A failed read
// skips the tick: the next sample then spans both intervals, with its measured length.
func (s *Sampler) tick(final bool) {
	snap, err := s.collect()
	if err != nil {
		s.log.Warn("metrics sample skipped", "err", err)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	prev := s.last
	dt := snap.at.Sub(prev.at)
	if dt <= 0 {
		return
	}
	d := snapshot{
		upBytes: delta(snap.upBytes, prev.upBytes), downBytes: delta(snap.downBytes, prev.downBytes),
		upPkts: delta(snap.upPkts, prev.upPkts), downPkts: delta(snap.downPkts, prev.downPkts),
		cpuServer: delta(snap.cpuServer, prev.cpuServer), cpuClient: delta(snap.cpuClient, prev.cpuClient),
		cpuTotal: delta(snap.cpuTotal, prev.cpuTotal),
	}
	srv, cli, tot := float64(d.cpuServer)/s.tck, float64(d.cpuClient)/s.tck, float64(d.cpuTotal)/s.tck
	s.last = snap
	t := &s.totals
	t.Elapsed = snap.at.Sub(s.start)
	t.UpBytes += d.upBytes
	t.DownBytes += d.downBytes
	t.UpPkts += d.upPkts
	t.DownPkts += d.downPkts
	s.ticks[0] += d.cpuServer
	s.ticks[1] += d.cpuClient
	s.ticks[2] += d.cpuTotal
	// From summed ticks, so totals carry no float drift.
	t.CPUServerSec, t.CPUClientSec, t.CPUTotalSec = float64(s.ticks[0])/s.tck, float64(s.ticks[1])/s.tck, float64(s.ticks[2])/s.tck
	if final && dt < s.interval/2 {
		return // too short to be a meaningful rate; it still counts in Totals
	}
	sec := dt.Seconds()
	sm := Sample{T: t.Elapsed,
		UpBytesPerS: float64(d.upBytes) / sec, DownBytesPerS: float64(d.downBytes) / sec,
		UpPktsPerS: float64(d.upPkts) / sec, DownPktsPerS: float64(d.downPkts) / sec,
		CPUServer: srv / sec, CPUClient: cli / sec, CPUTotal: tot / sec}
	s.feedRates(&sm, prev, snap, d)
	s.samples = append(s.samples, sm)
}

// delta is cur-prev, or 0 when the counter went backwards (interface recreated).
func delta(cur, prev uint64) uint64 {
	if cur < prev {
		return 0
	}
	return cur - prev
}

func (s *Sampler) collect() (snapshot, error) {
	var snap snapshot
	var errs []error
	for _, c := range s.collectors {
		if err := c.collect(&snap); err != nil {
			errs = append(errs, err)
		}
	}
	snap.at = time.Now()
	return snap, errors.Join(errs...)
}

// Stop ends sampling, takes a last snapshot so Totals covers the window up to now, closes
// the counters and returns the per-interval samples. The last, partial interval becomes a
// sample only if it is at least half an interval long. Stop is idempotent, and returns nil
// on a sampler that never started.
func (s *Sampler) Stop() []Sample {
	if s.done == nil {
		return nil
	}
	s.stopOnce.Do(func() {
		s.cancel()
		<-s.done
		s.tick(true)
		s.closeAll()
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Sample(nil), s.samples...)
}

// Totals returns the counts over the window so far; after Stop, over the whole window.
func (s *Sampler) Totals() Totals {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.totals
}

func (s *Sampler) closeAll() {
	for _, c := range s.collectors {
		if err := c.close(); err != nil {
			s.log.Warn("close metrics counter", "err", err)
		}
	}
	s.collectors = nil
}
