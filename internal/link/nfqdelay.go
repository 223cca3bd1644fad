package link

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/wirelab/wirelab/internal/execx"
	"github.com/wirelab/wirelab/internal/procfs"
)

// nfqShaper delays in user space where the kernel has no netem: iptables sends every packet
// the wire forwards to an NFQUEUE per egress interface, and the delayer (`wirelab __delayer`,
// run inside the wire namespace) holds each one until its release time. The FORWARD hook
// runs before the egress qdisc, so the delay sits before the HTB rate cap and a packet pays
// both. The rules have no --queue-bypass: if the delayer dies the wire stops (fail closed)
// rather than silently carrying traffic undelayed.
//
// Setup order: HTB, delayer (waits until its queues are bound), iptables rules. Teardown
// order: rules first (so nothing is queued to a queue nobody reads), then the delayer, then
// its pid and stats files; the log is kept for post-mortems.
type nfqShaper struct{}

// delayerArgs is the command line that starts the delayer detached inside the wire namespace.
func delayerArgs(w Wire, c Condition) (string, []string) {
	pid, log, stats := DelayerFiles(w)
	return execx.InNetns(w.NS, w.Self, DelayerArgs(c, labQueues(w).Nums(), pid, log, stats)...)
}

func (s nfqShaper) Setup(ctx context.Context, r execx.Runner, w Wire, c Condition) (Applied, error) {
	if w.Self == "" || w.StateDir == "" {
		return Applied{}, errors.New("nfqueue delayer: wire has no Self binary or StateDir")
	}
	setOffloads(ctx, r, w, c)
	if err := setupRate(ctx, r, w, c, "root", "1"); err != nil {
		return Applied{}, err
	}
	name, args := delayerArgs(w, c)
	out, err := r.Run(ctx, name, args...)
	if err != nil {
		return Applied{}, fmt.Errorf("start delayer: %w", err)
	}
	pid := parsePidLine(string(out))
	for _, cmd := range labQueues(w).Apply() {
		if _, err := inNS(ctx, r, w.NS, cmd[0], cmd[1:]...); err != nil {
			return Applied{}, fmt.Errorf("queue forwarded traffic to the delayer: %w", err)
		}
	}
	rb, err := readBackTC(ctx, r, w)
	if err != nil {
		return Applied{}, err
	}
	rules, err := inNS(ctx, r, w.NS, "iptables", "-t", "mangle", "-S", DelayChain)
	if err != nil {
		return Applied{}, fmt.Errorf("read back delayer rules: %w", err)
	}
	rb = strings.TrimSpace(rb + "\n" + strings.TrimSpace(string(rules)) +
		fmt.Sprintf("\ndelayer pid %d: delay %s jitter %s loss %g%%", pid, c.Delay, c.Jitter, c.LossPct))
	return Applied{Shaper: Made(!c.Unlimited(), ShaperNfqueue), ReadBack: rb, DelayerPid: pid}, nil
}

// parsePidLine reads the "pid N" line the detached delayer prints; 0 if absent.
func parsePidLine(out string) int {
	for _, l := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(l), "pid "); ok {
			if n, err := strconv.Atoi(strings.TrimSpace(rest)); err == nil {
				return n
			}
		}
	}
	return 0
}

func (s nfqShaper) Teardown(ctx context.Context, r execx.Runner, w Wire) error {
	var errs []error
	q := labQueues(w)
	// The jump may have been inserted more than once by a crashed earlier run: remove all.
	for _, h := range q.Hooks {
		for range 8 {
			cmd := q.Unhook(h)
			if _, err := inNS(ctx, r, w.NS, cmd[0], cmd[1:]...); err != nil {
				if !missing(err) {
					errs = append(errs, fmt.Errorf("remove delayer jump: %w", err))
				}
				break
			}
		}
	}
	for _, cmd := range q.DropChain() {
		if _, err := inNS(ctx, r, w.NS, cmd[0], cmd[1:]...); !missing(err) {
			errs = append(errs, fmt.Errorf("remove delayer chain (%s): %w", cmd[3], err))
		}
	}
	if err := s.stopDelayers(ctx, r, w); err != nil {
		errs = append(errs, err)
	}
	pid, _, stats := DelayerFiles(w)
	for _, f := range []string{pid, stats} {
		if w.StateDir == "" {
			break
		}
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("remove %s: %w", f, err))
		}
	}
	return errors.Join(errs...)
}

// stopDelayers stops the delayer named by the pid file and any other delayer still running
// in the wire namespace (a lost pid file must not leave one behind). A pid is only signalled
// if its command line says it is a delayer, so a recycled pid is never killed.
func (s nfqShaper) stopDelayers(ctx context.Context, r execx.Runner, w Wire) error {
	pids := map[int]bool{}
	if w.StateDir != "" {
		pidFile, _, _ := DelayerFiles(w)
		if b, err := os.ReadFile(pidFile); err == nil {
			if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				pids[n] = true
			}
		}
	}
	if out, err := r.Run(ctx, "ip", "netns", "pids", w.NS); err == nil {
		for _, f := range strings.Fields(string(out)) {
			if n, err := strconv.Atoi(f); err == nil {
				pids[n] = true
			}
		}
	}
	isDelayer := func(pid int) bool { _, ok := delayerCmdline(w.Proc, pid); return ok }
	var errs []error
	for pid := range pids {
		if !isDelayer(pid) {
			continue
		}
		if err := stopPid(ctx, pid, isDelayer); err != nil {
			errs = append(errs, fmt.Errorf("stop delayer %d: %w", pid, err))
		}
	}
	return errors.Join(errs...)
}

// delayerCmdline is pid's command line in proc when pid is a delayer (`wirelab __delayer
// ...`, its word after the program).
func delayerCmdline(proc procfs.FS, pid int) ([]string, bool) {
	if pid <= 0 {
		return nil, false
	}
	args, err := proc.Cmdline(pid)
	if err != nil || len(args) < 2 || !slices.Contains(args[1:], "__delayer") {
		return nil, false
	}
	return args, true
}

// stopPid sends SIGTERM (the delayer releases what it holds and exits), waits up to 3 s, then
// SIGKILL.
func stopPid(ctx context.Context, pid int, alive func(int) bool) error {
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		if errors.Is(err, syscall.ESRCH) {
			return nil
		}
		return err
	}
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if !alive(pid) {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	for range 50 {
		if !alive(pid) {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("pid %d still alive after SIGKILL", pid)
}
