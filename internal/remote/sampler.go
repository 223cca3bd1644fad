package remote

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/wirelab/wirelab/internal/hosts"
	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/metrics"
	"github.com/wirelab/wirelab/internal/study"
)

// firstLineWithin bounds how long a measurement waits for both agents' first lines: an
// SSH session, the agent's start and one /proc read.
const firstLineWithin = 15 * time.Second

// sampler runs `wirelab agent sample` on the client (the wire: the shaped classes of the
// NIC and its IFB, which carry only the client <-> server flows; sysbench's CPU) and on
// the server (the database server's CPU and the machine's) for one measurement, and turns
// their cumulative counters into the same per-second samples as the lab's sampler. When
// the load driver runs on the server host (transport's socket and local-TCP paths), a
// third agent there watches sysbench, whose CPU is still the client side's; across from a
// replica host (the sync study) the server host's agent counts sysbench with the server,
// and the replica host's agent its replica's server as the client side. When the load
// is split among several clients (Sides.Clients), each of them runs an agent for its own
// wire and sysbench, the server one agent for all: each client's samples are kept
// (study.ClientSampler) and Stop returns their sum. An existing server's host runs no
// agent: the server's CPU is not measured.
type sampler struct {
	b       *Backend
	driver  string   // the host the load driver runs on (a lab role)
	clients []string // the client roles a split load runs on; nil = one driver
	inner   []*metrics.Sampler
	per     [][]metrics.Sample
	wires   map[int]*metrics.Feed // by far host (index of Backend.clients): the feed of its shaped classes
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	mu      sync.Mutex
	errs    []error
}

// Sampler implements study.Backend. The sides' pids are this machine's view and do not
// apply: each agent finds its side's processes by name on its own host.
func (b *Backend) Sampler(sides study.Sides) study.Sampler {
	return &sampler{b: b, driver: sides.DriverHost, clients: sides.Clients}
}

// sampleFor bounds a sample agent's life on its host, should nothing stop it.
const sampleFor = 6 * time.Hour

// sampleCommand is a sample agent's command line: a line a second, what watch selects.
func sampleCommand(watch ...metrics.SampleCommand) metrics.SampleCommand {
	c := metrics.SampleCommand{Every: time.Second, For: sampleFor}
	for _, w := range watch {
		c.UpClass, c.DownClass = cmp.Or(w.UpClass, c.UpClass), cmp.Or(w.DownClass, c.DownClass)
		c.Comms, c.PIDs, c.Trees = append(c.Comms, w.Comms...), append(c.PIDs, w.PIDs...), append(c.Trees, w.Trees...)
	}
	return c
}

// wireWatch selects a client's shaped classes (up: its NIC, down: its IFB).
func wireWatch(nic string) metrics.SampleCommand {
	return metrics.SampleCommand{UpClass: shapedClass(nic), DownClass: shapedClass(hosts.IFBName(nic))}
}

// shapedClass is the HTB class wirelab shapes on dev.
func shapedClass(dev string) metrics.TCClass { return metrics.TCClass{Dev: dev, ID: shapedClassID} }

// shapedClassID is hosts.ShapedClass parsed, once: a typo in that constant stops every
// program and test at start instead of sampling nothing.
var shapedClassID = func() metrics.ClassID {
	id, err := metrics.ParseClassID(hosts.ShapedClass)
	if err != nil {
		panic(fmt.Sprintf("hosts.ShapedClass: %v", err))
	}
	return id
}()

// comms selects processes by name.
func comms(names ...string) metrics.SampleCommand { return metrics.SampleCommand{Comms: names} }

func (s *sampler) Start(ctx context.Context) error {
	ctx, s.cancel = context.WithCancel(ctx)
	b := s.b
	var server *metrics.Feed
	var feeds []*metrics.Feed
	if b.server != nil {
		server = metrics.NewFeed()
		feeds = append(feeds, server)
	}
	// feedsOf are one client's sources: with an existing server, whose host has no agent,
	// the server's CPU is not measured and the machine whose CPU the verdict weighs is the
	// client's, the one host measured.
	feedsOf := func(wire, clientCPU *metrics.Feed) metrics.Feeds {
		if server == nil {
			return metrics.Feeds{Wire: wire, ClientCPU: clientCPU, Machine: wire}
		}
		return metrics.Feeds{Wire: wire, ClientCPU: clientCPU, ServerCPU: server, Machine: server}
	}
	var srcs []metrics.Feeds
	var serverExtra metrics.SampleCommand // more processes the server host's agent counts as the server side
	if len(s.clients) > 1 {
		for _, role := range s.clients {
			h := b.hostOf(role)
			f := metrics.NewFeed()
			s.wire(b.indexOf(h), f)
			s.run(ctx, h.h, sampleCommand(wireWatch(b.targetOf(h).NIC), b.farWatch()).Argv(h.stage.Agent), f)
			feeds = append(feeds, f)
			srcs = append(srcs, feedsOf(f, f))
		}
	} else {
		c := b.clients[0]
		client := metrics.NewFeed()
		s.wire(0, client)
		wire, driver := []metrics.SampleCommand{wireWatch(b.targets[0].NIC)}, client
		feeds = append(feeds, client)
		switch {
		case s.driver == lab.Server && b.far == lab.Replica:
			// The sync study's load beside the primary: the driver is the server side's,
			// the replica's server the client side's, as the lab's Sides count them.
			wire = append(wire, b.farWatch())
			serverExtra = comms("sysbench")
		case s.driver == lab.Server:
			driver = metrics.NewFeed()
			feeds = append(feeds, driver)
			s.run(ctx, b.server.h, sampleCommand(comms("sysbench")).Argv(b.server.stage.Agent), driver)
		default:
			wire = append(wire, b.farWatch())
		}
		s.run(ctx, c.h, sampleCommand(wire...).Argv(c.stage.Agent), client)
		srcs = append(srcs, feedsOf(client, driver))
	}
	if b.server != nil {
		s.run(ctx, b.server.h, sampleCommand(serverWatch(b.engine.Spec(), b.serverPid), serverExtra).Argv(b.server.stage.Agent), server)
	}
	if b.o.DryRun != nil {
		return nil // the agents are printed; no counters will come
	}
	wait, cancel := context.WithTimeout(ctx, firstLineWithin)
	defer cancel()
	if err := waitFirst(wait, feeds...); err != nil {
		s.Stop()
		return fmt.Errorf("start the sample agents: %w", errors.Join(append(s.failures(), err)...))
	}
	for _, f := range srcs {
		in := metrics.NewSampler(metrics.Source{Feeds: f}, time.Second, b.log)
		if err := in.Start(ctx); err != nil {
			s.Stop()
			return err
		}
		s.inner = append(s.inner, in)
	}
	return nil
}

// targetOf is the shaping target of client host h.
func (b *Backend) targetOf(h *host) hosts.ShapeTarget { return b.targets[b.indexOf(h)] }

// indexOf is far host h's index in b.clients (0 when h is none of them).
func (b *Backend) indexOf(h *host) int {
	for i, c := range b.clients {
		if c == h {
			return i
		}
	}
	return 0
}

// wire records f as the feed of far host i's shaped classes, whose gone reads Stop hands
// to the backend (ReadShaping).
func (s *sampler) wire(i int, f *metrics.Feed) {
	if s.wires == nil {
		s.wires = map[int]*metrics.Feed{}
	}
	s.wires[i] = f
}

// farWatch selects the far host's side's CPU for its sample agent: the replica's
// mariadbd by its pid when the far host runs one (replication), else sysbench by name.
func (b *Backend) farWatch() metrics.SampleCommand {
	if b.farPid > 0 {
		return metrics.SampleCommand{PIDs: []int{b.farPid}}
	}
	if b.far == lab.Replica { // a dry run's replica: its pid is not known yet
		return comms(b.engine.Spec().Comms[0])
	}
	return comms("sysbench")
}

// serverWatch selects the server's processes on its host for the sample agent: its pid,
// so a production server on the same host is not counted, and with WatchTree its
// children too (a backend per connection, rescanned each second); by name only before
// the server's pid is known.
func serverWatch(spec EngineSpec, pid int) metrics.SampleCommand {
	switch {
	case pid <= 0:
		return comms(spec.Comms[0])
	case spec.WatchTree:
		return metrics.SampleCommand{Trees: []int{pid}}
	}
	return metrics.SampleCommand{PIDs: []int{pid}}
}

// waitFirst waits until every feed has its first line (its baseline), so the sampler's
// first second is measured from both agents' starts.
func waitFirst(ctx context.Context, feeds ...*metrics.Feed) error {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		ready := true
		for _, f := range feeds {
			_, ok := f.Latest()
			ready = ready && ok
		}
		if ready {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("no counters from an agent within %s: %w", firstLineWithin, ctx.Err())
		case <-t.C:
		}
	}
}

// run streams one agent's lines into f until ctx ends. A dry run's host only prints the
// command, at once and in order.
func (s *sampler) run(ctx context.Context, h hosts.Host, argv []string, f *metrics.Feed) {
	if s.b.o.DryRun != nil {
		_, _, _ = h.Stream(ctx, argv, nil, nil, nil)
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		_, _, err := h.Stream(ctx, argv, nil, nil, func(line string) {
			if err := f.Line(line); err != nil {
				s.b.log.Warn("sample agent line", "host", h.Name(), "err", err)
			}
		})
		if err != nil && ctx.Err() == nil {
			s.mu.Lock()
			s.errs = append(s.errs, fmt.Errorf("sample agent on %s: %w", h.Name(), err))
			s.mu.Unlock()
		}
	}()
}

func (s *sampler) failures() []error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]error(nil), s.errs...)
}

// Stop stops the agents and returns the samples: the one client's, or the sum of the
// clients' (metrics.SumClients) when the load was split.
func (s *sampler) Stop() []metrics.Sample {
	s.per = nil
	for _, in := range s.inner {
		s.per = append(s.per, in.Stop())
	}
	s.cancel()
	s.wg.Wait()
	for _, err := range s.failures() {
		s.b.log.Warn("sampling", "err", err)
	}
	for i, f := range s.wires {
		if l, ok := f.Latest(); ok && l.WireGone > 0 {
			s.b.noteGone(i, l.WireGone)
		}
	}
	if len(s.per) == 0 {
		return nil
	}
	if len(s.per) == 1 {
		return s.per[0]
	}
	return metrics.SumClients(s.per)
}

// ClientSamples implements study.ClientSampler: each client's own samples, in
// Sides.Clients order, after Stop; nil with one driver.
func (s *sampler) ClientSamples() [][]metrics.Sample {
	if len(s.clients) <= 1 {
		return nil
	}
	return s.per
}

func (s *sampler) Totals() metrics.Totals {
	var ts []metrics.Totals
	for _, in := range s.inner {
		ts = append(ts, in.Totals())
	}
	return metrics.SumClientTotals(ts)
}
