package metrics

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/wirelab/wirelab/internal/execx"
	"github.com/wirelab/wirelab/internal/procfs"
)

// maxCommLen is how much of a process name /proc/PID/comm keeps (TASK_COMM_LEN - 1).
const maxCommLen = 15

// AgentConfig says what an agent reads on its own host. Each wire direction comes from an
// HTB class or from an interface, or is left out (0); CPU is the processes named by Comms,
// PIDs or Trees.
type AgentConfig struct {
	UpClass, DownClass TCClass // the shaped class of each direction; zero Dev: not a class
	UpIface, DownIface string  // or: what UpIface transmits, what DownIface receives
	Comms              []string
	PIDs               []int
	// Trees are processes watched with their children, listed anew every sample: a
	// postmaster and its backends, one per connection.
	Trees    []int
	ProcRoot string       // "" = this machine's (procfs.DefaultRoot)
	Runner   execx.Runner // runs tc; default the OS
	Logger   *slog.Logger // a nil logger discards
}

// Agent reads its host's counters and turns them into AgentLines. It is not safe for
// concurrent use: the agent's loop calls Line once per interval.
type Agent struct {
	up, down *wireCounter // nil: direction not read
	watch    *procWatch   // nil: no processes watched
	cpu      *procCPUCollector
	machine  *machineCPUCollector
	tck      float64
	gone     uint64 // reads that found a wire counter missing (AgentLine.WireGone)
	log      *slog.Logger
}

// NewAgent checks cfg and returns an agent whose first Line is its baseline: wire and
// process counters count from there, the machine's busy time since boot.
func NewAgent(cfg AgentConfig) (*Agent, error) {
	if cfg.Runner == nil {
		cfg.Runner = execx.OS{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	for _, n := range cfg.Comms {
		if n == "" || len(n) > maxCommLen || strings.ContainsRune(n, '/') {
			return nil, fmt.Errorf("new agent: process name %q: want 1 to %d characters, as /proc/PID/comm shows it", n, maxCommLen)
		}
	}
	for _, pid := range append(slices.Clone(cfg.PIDs), cfg.Trees...) {
		if pid <= 0 {
			return nil, fmt.Errorf("new agent: pid %d: want a positive process id", pid)
		}
	}
	up, err := newWireCounter(cfg, "up", cfg.UpClass, cfg.UpIface, false)
	if err != nil {
		return nil, fmt.Errorf("new agent: %w", err)
	}
	down, err := newWireCounter(cfg, "down", cfg.DownClass, cfg.DownIface, true)
	if err != nil {
		return nil, fmt.Errorf("new agent: %w", err)
	}
	proc := procfs.At(cfg.ProcRoot)
	a := &Agent{up: up, down: down, machine: newMachineCPUCollector(proc), tck: clkTck(),
		log: cfg.Logger.With("component", "agent")}
	if len(cfg.Comms) > 0 || len(cfg.PIDs) > 0 || len(cfg.Trees) > 0 {
		a.watch = &procWatch{proc: proc, comms: cfg.Comms, pids: cfg.PIDs, trees: cfg.Trees}
		a.cpu = newProcCPUCollector(proc, a.watch.list,
			func(sn *snapshot, v uint64) { sn.cpuServer = v }) // the one CPU figure an agent has
	}
	return a, nil
}

// newWireCounter builds one direction from a class or an interface; rx says the
// interface's received counters are this direction.
func newWireCounter(cfg AgentConfig, dir string, class TCClass, iface string, rx bool) (*wireCounter, error) {
	switch {
	case class.Dev != "" && iface != "":
		return nil, fmt.Errorf("%s: a class (%s) or an interface (%s), not both", dir, class, iface)
	case class.Dev != "":
		return &wireCounter{side: tcClassSide{run: cfg.Runner, class: class}}, nil
	case iface != "":
		path := procfs.At(cfg.ProcRoot).Path("net", "dev")
		if err := checkIfaces(path, iface); err != nil {
			return nil, fmt.Errorf("%s: %w", dir, err)
		}
		return &wireCounter{side: netDevSide{path: path, iface: iface, rx: rx}}, nil
	}
	return nil, nil
}

// Line reads every counter and returns them as one line. The CPU counters are read
// first and the wire last, just before the timestamp, because the wire's rate is the
// series that divides by the interval most sharply (CPU comes in 10 ms ticks).
func (a *Agent) Line(ctx context.Context) (AgentLine, error) {
	var sn snapshot
	var errs []error
	if a.cpu != nil {
		if err := a.cpu.collect(&sn); err != nil {
			errs = append(errs, err)
		}
		if err := a.watch.err; err != nil {
			errs = append(errs, err)
		}
	}
	if err := a.machine.collect(&sn); err != nil {
		errs = append(errs, err)
	}
	var up, down counts
	for _, w := range []struct {
		c   *wireCounter
		out *counts
	}{{a.up, &up}, {a.down, &down}} {
		if w.c == nil {
			continue
		}
		c, ok, err := w.c.side.read(ctx)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if w.c.observe(c, ok) {
			a.logPresence(w.c.side, ok)
		}
		if !ok {
			a.gone++
		}
		*w.out = w.c.total
	}
	now := time.Now()
	if err := errors.Join(errs...); err != nil {
		return AgentLine{}, fmt.Errorf("agent line: %w", err)
	}
	return AgentLine{UnixNano: now.UnixNano(),
		UpBytes: up.Bytes, DownBytes: down.Bytes, UpPkts: up.Packets, DownPkts: down.Packets,
		CPUTicks: sn.cpuServer, MachineTicks: sn.cpuTotal, ClkTck: a.tck, WireGone: a.gone}, nil
}

func (a *Agent) logPresence(side wireSide, ok bool) {
	if ok {
		a.log.Info("wire counter back; counting it from zero", "counter", side.String())
		return
	}
	a.log.Info("wire counter gone; no new bytes until it returns", "counter", side.String())
}

// procWatch lists the pids to watch every sample: the given ones, the trees' roots with
// their children of the moment, and every process whose comm is one of the names, so
// servers, backends and clients started later are found.
type procWatch struct {
	proc  procfs.FS
	comms []string
	pids  []int
	trees []int
	err   error // of the last listing; procCPUCollector's pid func cannot return one
}

func (w *procWatch) list() []int {
	w.err = nil
	out := slices.Clone(w.pids)
	for _, t := range w.trees {
		for _, pid := range w.proc.Tree(t) {
			if !slices.Contains(out, pid) {
				out = append(out, pid)
			}
		}
	}
	if len(w.comms) == 0 {
		return out
	}
	all, err := w.proc.Pids()
	if err != nil {
		w.err = err
		return out
	}
	for _, pid := range all {
		if slices.Contains(out, pid) {
			continue
		}
		comm, err := w.proc.Comm(pid)
		if err != nil {
			continue // exited since the listing
		}
		if slices.Contains(w.comms, comm) {
			out = append(out, pid)
		}
	}
	return out
}
