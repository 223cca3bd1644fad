package metrics

import (
	"fmt"
	"math"
	"strings"
	"sync"
)

// Feed holds the latest line of one agent's output stream. The caller reads the stream
// (an SSH session running `wirelab agent sample`) and hands every line to Line; a Sampler
// whose Source names the feed reads its latest values on every tick. Safe for concurrent
// use.
//
// Values are reported from the feed's first line on (that line reads as zeros), so a
// since-boot counter such as MachineTicks does not look like one huge interval. When a
// counter goes down, the agent was restarted and counts from zero again: the feed adds
// the old agent's last value, so what it reports still only grows.
type Feed struct {
	mu     sync.Mutex
	has    bool
	at     int64
	clkTck float64
	base   feedCounters // first line's
	raw    feedCounters // latest line's
	carry  feedCounters // last values of agents that were replaced
}

// feedCounters are an AgentLine's counters in a fixed order, so the feed treats them alike.
type feedCounters [7]uint64

func countersOf(l AgentLine) feedCounters {
	return feedCounters{l.UpBytes, l.DownBytes, l.UpPkts, l.DownPkts, l.CPUTicks, l.MachineTicks, l.WireGone}
}

func (c feedCounters) line(at int64, clkTck float64) AgentLine {
	return AgentLine{UnixNano: at, UpBytes: c[0], DownBytes: c[1], UpPkts: c[2], DownPkts: c[3],
		CPUTicks: c[4], MachineTicks: c[5], ClkTck: clkTck, WireGone: c[6]}
}

// NewFeed returns a feed with no line yet.
func NewFeed() *Feed { return &Feed{} }

// Line parses one line of agent output and pushes it; a blank line is ignored.
func (f *Feed) Line(s string) error {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	l, err := ParseAgentLine(s)
	if err != nil {
		return fmt.Errorf("feed: %w", err)
	}
	return f.Push(l)
}

// Push records l as the latest line. A line that is not later than the latest one is
// refused: a stream delivers lines in order, so it is a second stream fed by mistake.
func (f *Feed) Push(l AgentLine) error {
	if err := l.validate(); err != nil {
		return fmt.Errorf("feed: %w", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	cur := countersOf(l)
	if !f.has {
		f.has, f.base, f.raw = true, cur, cur
		f.at, f.clkTck = l.UnixNano, l.ClkTck
		return nil
	}
	if l.UnixNano <= f.at {
		return fmt.Errorf("feed: line at %d is not after the latest (%d)", l.UnixNano, f.at)
	}
	for i := range cur {
		if cur[i] < f.raw[i] { // a new agent counting from zero
			f.carry[i] += f.raw[i]
		}
	}
	f.raw, f.at, f.clkTck = cur, l.UnixNano, l.ClkTck
	return nil
}

// Latest returns the counters since the feed's first line, stamped with the latest
// line's time by the agent's clock; ok is false until a line arrived.
func (f *Feed) Latest() (l AgentLine, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.has {
		return AgentLine{}, false
	}
	var v feedCounters
	for i := range v {
		v[i] = f.raw[i] + f.carry[i] - f.base[i]
	}
	return v.line(f.at, f.clkTck), true
}

// Feeds names, per role, the agent whose lines replace a local read. Roles may share a
// feed: the client host's agent gives the wire and the client's CPU, the server host's
// the server's CPU and the machine's.
type Feeds struct {
	Wire      *Feed // up/down bytes and packets: the client host's agent
	ClientCPU *Feed // CPUTicks of the load client's processes
	ServerCPU *Feed // CPUTicks of the database server's processes
	Machine   *Feed // MachineTicks: the host whose cores the verdict weighs (the server's)
}

// part is one group of snapshot fields that is read, and timed, together.
type part int

const (
	partWire part = iota
	partServer
	partClient
	partMachine
	nParts
)

// feedCollector fills one part of a snapshot from a feed's latest line. A feed with no
// line yet leaves the part at zero, like a pid that has not started.
type feedCollector struct {
	feed *Feed
	part part
	tck  float64 // the sampler's tick unit, into which remote ticks are converted
}

func (c feedCollector) collect(sn *snapshot) error {
	l, ok := c.feed.Latest()
	if !ok {
		return nil
	}
	switch c.part {
	case partWire:
		sn.upBytes, sn.downBytes, sn.upPkts, sn.downPkts = l.UpBytes, l.DownBytes, l.UpPkts, l.DownPkts
	case partServer:
		sn.cpuServer = rescaleTicks(l.CPUTicks, l.ClkTck, c.tck)
	case partClient:
		sn.cpuClient = rescaleTicks(l.CPUTicks, l.ClkTck, c.tck)
	case partMachine:
		sn.cpuTotal = rescaleTicks(l.MachineTicks, l.ClkTck, c.tck)
	}
	sn.fedAt[c.part] = l.UnixNano
	return nil
}

func (c feedCollector) close() error { return nil }

// rescaleTicks converts cumulative ticks from one tick rate to another. USER_HZ is 100 on
// every Linux Go supports, so this is the identity in practice; it keeps the meaning right
// if a host ever differs.
func rescaleTicks(v uint64, from, to float64) uint64 {
	if from == to || from <= 0 {
		return v
	}
	return uint64(math.Round(float64(v) * to / from))
}
