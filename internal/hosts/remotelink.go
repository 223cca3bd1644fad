package hosts

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wirelab/wirelab/internal/link"
)

// RemoteLink shapes a real client NIC toward the server (PlanShape) under a dead-man
// switch. Shape arms the switch before it changes the NIC, so there is no moment when the
// NIC is shaped and nothing would undo it; Clear disarms it and undoes.
type RemoteLink struct {
	Host   Host        // the client host
	Target ShapeTarget // its NIC and the server's address
	// Dir is a directory of wirelab's on the host holding the renewal and undo files,
	// the switch's log and the delay line's log and stats; Agent is the wirelab binary
	// there, which runs the switch and the delay line.
	Dir, Agent string
	TTL        time.Duration // the switch's TTL; 0 = 30 s
	// Run is the run's id, which names the switch's pid file with the host and NIC.
	Run string
	Log *slog.Logger

	mu      sync.Mutex
	shaper  link.Shaper
	plan    Plan // the last Shape's, which Read compares the host's read-back with
	deadman Proc
	stop    chan struct{}
	done    chan struct{}
}

func (l *RemoteLink) renewFile() string { return path.Join(l.Dir, "deadman.renew") }

// switchDir holds the pid files of the dead-man switches guarding nic on the inventory's
// host named host, one file per run (switchPidFile): a switch belongs to its host and run,
// so two hosts of one machine (namespaces sharing /run) never retire each other's switch,
// while a run started again within the TTL of a killed one finds the old switch there and
// retires it before shaping instead of having it undo the new shaping later. It lives in
// /run, which only root writes (shaping needs root anyway), not in /tmp where anyone
// could plant one. Inventory names have no '@' and NIC names no '/', so the directory is
// one host's and NIC's.
func switchDir(host, nic string) string { return "/run/wirelab-deadman/" + host + "@" + nic }

// switchPidFile is the pid file of run's switch of nic on host.
func switchPidFile(host, nic, run string) string { return path.Join(switchDir(host, nic), run+".pid") }

// retireScript stops the process named in the pid file %[1]s if the file is ours and the
// process is the one meant (its command line has the word %[2]s: a recycled pid is never
// signalled), and waits up to 10 s for it to undo or release what it holds and exit.
const retireScript = `f=%[1]s; [ -f "$f" ] && [ -O "$f" ] || exit 0; p=$(cat "$f"); rm -f "$f"; ` +
	`tr '\0' ' ' </proc/$p/cmdline 2>/dev/null | grep -q -- %[2]s || exit 0; kill -TERM $p; i=0; ` +
	`while [ $i -lt 100 ] && kill -0 $p 2>/dev/null; do sleep 0.1; i=$((i+1)); done; exit 0`

// retireSwitchesScript is retireScript for every pid file in the directory $1, printing
// "PID FILE" for each switch that was still running when it was told to stop.
const retireSwitchesScript = `for f in "$1"/*.pid; do [ -f "$f" ] && [ -O "$f" ] || continue; p=$(cat "$f"); rm -f "$f"; ` +
	`tr '\0' ' ' </proc/$p/cmdline 2>/dev/null | grep -q -- '` + deadmanMark + `' || continue; echo "$p $f"; kill -TERM $p; i=0; ` +
	`while [ $i -lt 100 ] && kill -0 $p 2>/dev/null; do sleep 0.1; i=$((i+1)); done; done; exit 0`

// Words of the command lines retire looks for: the switch's and the delayer's.
const (
	deadmanMark = " agent deadman "
	delayerMark = " __delayer "
)

// retire is the command that stops the process of pidFile whose command line has mark.
func retire(pidFile, mark string) []string {
	return []string{"sh", "-c", fmt.Sprintf(retireScript, ShellQuote(pidFile), ShellQuote(mark))}
}

// retireSwitches stops every dead-man switch of nic on h (any run's) and returns, one
// line each, those that were still running: a live switch of another run whose undo has
// just cleared nic's shaping, which the caller reports.
func retireSwitches(ctx context.Context, h Host, nic string) ([]string, error) {
	out, err := h.Run(ctx, "sh", "-c", retireSwitchesScript, "sh", switchDir(h.Name(), nic))
	if err != nil {
		return nil, fmt.Errorf("host %s: retire the dead-man switches of %s: %w", h.Name(), nic, err)
	}
	var live []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if pid, file, ok := strings.Cut(strings.TrimSpace(line), " "); ok {
			live = append(live, fmt.Sprintf("pid %s (%s)", pid, file))
		}
	}
	return live, nil
}

// pidFile is this run's switch's pid file.
func (l *RemoteLink) pidFile() string { return switchPidFile(l.Host.Name(), l.Target.NIC, l.Run) }

func (l *RemoteLink) undoFile() string { return path.Join(l.Dir, "deadman.undo") }

func (l *RemoteLink) ttl() time.Duration {
	if l.TTL <= 0 {
		return DefaultDeadmanTTL
	}
	return l.TTL
}

func (l *RemoteLink) log() *slog.Logger {
	if l.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l.Log
}

// Shape replaces any shaping of the target by c. If applying fails half-way, the NIC is
// cleared, not left half-shaped.
func (l *RemoteLink) Shape(ctx context.Context, c link.Condition) error {
	t := l.Target
	t.Agent, t.Dir = l.Agent, l.Dir
	p, err := PlanShape(t, c)
	if err != nil {
		return err
	}
	if err := l.arm(ctx); err != nil {
		return err
	}
	r := Runner(l.Host)
	if err := RunUndo(ctx, r, p.Undo); err != nil {
		return fmt.Errorf("host %s: clear the shaping of %s: %w", l.Host.Name(), l.Target.NIC, err)
	}
	for _, cmd := range p.Apply {
		if _, err := r.Run(ctx, cmd[0], cmd[1:]...); err != nil {
			return errors.Join(fmt.Errorf("shape %s toward %s (%s): %w", l.Target.NIC, l.Target.Peer, c, err),
				RunUndo(context.WithoutCancel(ctx), r, p.Undo))
		}
	}
	l.mu.Lock()
	l.shaper, l.plan = p.Shaper, p
	l.mu.Unlock()
	return nil
}

// Shaper is how the last Shape made the link (Plan.Shaper), "" before any.
func (l *RemoteLink) Shaper() link.Shaper {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.shaper
}

// arm starts the switch and its renewal unless they run; a switch that already fired
// (its process is gone) is started again.
func (l *RemoteLink) arm(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.deadman != nil {
		if _, err := l.Host.Run(ctx, "kill", "-0", strconv.Itoa(l.deadman.Pid())); err == nil {
			return nil
		}
		l.log().Warn("deadman switch had fired: arming it again", "host", l.Host.Name())
		l.stopRenewing()
		l.deadman = nil
	}
	undo, err := FormatUndo(UndoFile(l.Target.NIC))
	if err != nil {
		return err
	}
	if l.Run == "" {
		return fmt.Errorf("host %s: arm the dead-man switch of %s: no run id to name it by", l.Host.Name(), l.Target.NIC)
	}
	live, err := retireSwitches(ctx, l.Host, l.Target.NIC)
	if err != nil {
		return err
	}
	for _, sw := range live {
		l.log().Warn("retired a dead-man switch of another run that was still running: its undo cleared the NIC's shaping, which this run now makes anew",
			"host", l.Host.Name(), "nic", l.Target.NIC, "switch", sw)
	}
	pf := l.pidFile()
	if _, err := l.Host.Run(ctx, "mkdir", "-p", path.Dir(pf)); err != nil {
		return fmt.Errorf("arm the dead-man switch: %w", err)
	}
	if err := l.Host.Copy(ctx, strings.NewReader(undo), l.undoFile(), 0o600); err != nil {
		return fmt.Errorf("arm the dead-man switch: %w", err)
	}
	if _, err := l.Host.Run(ctx, "touch", l.renewFile()); err != nil {
		return fmt.Errorf("arm the dead-man switch: %w", err)
	}
	cmd := DeadmanCommand{TTL: l.ttl(), Renew: l.renewFile(), Undo: l.undoFile(), DelayerPid: delayerPidFile(l.Target.NIC)}
	p, err := l.Host.Start(ctx, "deadman", cmd.Argv(l.Agent), path.Join(l.Dir, "deadman.log"))
	if err != nil {
		return fmt.Errorf("arm the dead-man switch: %w", err)
	}
	l.deadman = p
	if err := l.Host.Copy(ctx, strings.NewReader(strconv.Itoa(p.Pid())+"\n"), pf, 0o644); err != nil {
		return fmt.Errorf("arm the dead-man switch: %w", err)
	}
	l.stop, l.done = make(chan struct{}), make(chan struct{})
	go l.renew(l.stop, l.done)
	return nil
}

// renew touches the renewal file every TTL/3 until stop. A failed touch is logged, not
// fatal: two more chances come before the TTL runs out, and if the host stays unreachable
// the switch does its job.
func (l *RemoteLink) renew(stop, done chan struct{}) {
	defer close(done)
	every := l.ttl() / 3
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), every)
		_, err := l.Host.Run(ctx, "touch", l.renewFile())
		cancel()
		if err != nil {
			l.log().Warn("renew the dead-man switch", "host", l.Host.Name(), "err", err)
		}
	}
}

func (l *RemoteLink) stopRenewing() {
	if l.stop != nil {
		close(l.stop)
		<-l.done
		l.stop, l.done = nil, nil
	}
}

// Clear removes the shaping and disarms the switch. It is idempotent; stopping the switch
// makes it undo too, and Clear then undoes itself, so the NIC is clean even if the
// switch was already gone.
func (l *RemoteLink) Clear(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stopRenewing()
	var errs []error
	if l.deadman != nil {
		if err := l.deadman.Stop(ctx); err != nil {
			errs = append(errs, err)
		}
		l.deadman = nil
		// The pid file, then its directories when no other switch's file is left in them.
		pf := l.pidFile()
		if _, err := l.Host.Run(ctx, "sh", "-c", `rm -f "$1"; rmdir "$2" "$3" 2>/dev/null; exit 0`, "sh",
			pf, path.Dir(pf), path.Dir(path.Dir(pf))); err != nil {
			errs = append(errs, err)
		}
	}
	if err := RunUndo(ctx, Runner(l.Host), UndoShape(l.Target.NIC)); err != nil {
		errs = append(errs, fmt.Errorf("host %s: remove the shaping of %s: %w", l.Host.Name(), l.Target.NIC, err))
	}
	return errors.Join(errs...)
}

// ClearNIC removes wirelab's shaping of nic on h and retires its dead-man switches (every
// run's on that host and NIC), without any state of the run that made them: `wirelab down
// --hosts` after a kill -9.
func ClearNIC(ctx context.Context, h Host, nic string) error {
	if _, err := retireSwitches(ctx, h, nic); err != nil {
		return err
	}
	if err := RunUndo(ctx, Runner(h), UndoShape(nic)); err != nil {
		return fmt.Errorf("host %s: remove the shaping of %s: %w", h.Name(), nic, err)
	}
	return nil
}
