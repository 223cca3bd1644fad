package lab

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/wirelab/wirelab/internal/execx"
	"github.com/wirelab/wirelab/internal/procfs"
)

// Down removes the lab: it stops every process of the lab — all of its cgroup (each
// long-running process it started, and what they forked, even in namespaces whose names are
// gone) and whatever `ip netns pids` finds in its hosts (so nothing started by hand inside a
// host survives either) — deletes the namespaces (which takes their veths, qdiscs and
// iptables rules with them), what the lab changed in this machine's own namespace to reach
// an existing server, the cgroup, the temp dir and the state file. It is idempotent
// and works on a half-built lab.
func (l *Lab) Down(ctx context.Context) error { return DownState(ctx, l.base, l.State, l.log) }

// DownState removes the lab described by st (e.g. loaded from its state file after the
// wirelab that made it was killed).
func DownState(ctx context.Context, r execx.Runner, st *State, log *slog.Logger) error {
	if log == nil {
		log = discard()
	}
	var errs []error
	existing := existingNamespaces(ctx, r)
	var pids []int
	for _, role := range st.Hosts {
		ns := st.NS(role)
		if !existing[ns] {
			continue
		}
		pids = append(pids, netnsPids(ctx, r, ns)...)
	}
	cg := Cgroups{Root: filepath.Dir(st.Cgroup)}
	stopped, err := cg.Stop(st.Cgroup, pids, 15*time.Second)
	if err != nil {
		errs = append(errs, err)
	}
	for _, role := range st.Hosts {
		ns := st.NS(role)
		if !existing[ns] {
			continue
		}
		if _, err := r.Run(ctx, "ip", "netns", "del", ns); err != nil {
			errs = append(errs, fmt.Errorf("delete host %s: %w", role, err))
		}
	}
	// After the namespaces: the leg went with the server host, and nothing of the lab
	// sends through the machine's tables any more.
	errs = append(errs, undoOutside(ctx, r, st.Outside)...)
	if st.Cgroup != "" {
		if err := cg.Remove(st.Cgroup); err != nil {
			errs = append(errs, err)
		}
	}
	if st.TempDir != "" && strings.Contains(st.TempDir, "wirelab-") {
		if err := os.RemoveAll(st.TempDir); err != nil {
			errs = append(errs, fmt.Errorf("remove lab temp dir: %w", err))
		}
	}
	if len(errs) == 0 && st.Path != "" {
		if err := os.Remove(st.Path); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("remove lab state: %w", err))
		}
	}
	log.Debug("lab down", "run_id", st.RunID, "stopped", stopped, "cgroup", st.Cgroup, "errors", len(errs))
	return errors.Join(errs...)
}

func existingNamespaces(ctx context.Context, r execx.Runner) map[string]bool {
	out, _ := r.Run(ctx, "ip", "netns", "list")
	m := map[string]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			m[f[0]] = true
		}
	}
	return m
}

// Orphans returns lab namespaces with no state file in dir (a lab killed before it could
// save, or whose state file was removed by hand), grouped by run id.
func Orphans(ctx context.Context, r execx.Runner, dir string) map[string][]string {
	known := map[string]bool{}
	ids, _ := List(dir)
	for _, id := range ids {
		known[id] = true
	}
	out := map[string][]string{}
	for ns := range existingNamespaces(ctx, r) {
		parts := strings.SplitN(ns, "-", 3)
		if len(parts) == 3 && parts[0] == "wl" && !known[parts[1]] {
			out[parts[1]] = append(out[parts[1]], parts[2])
		}
	}
	return out
}

func netnsPids(ctx context.Context, r execx.Runner, ns string) []int {
	out, _ := r.Run(ctx, "ip", "netns", "pids", ns)
	var pids []int
	for _, f := range strings.Fields(string(out)) {
		if pid, err := strconv.Atoi(f); err == nil && pid > 1 && pid != os.Getpid() {
			pids = append(pids, pid)
		}
	}
	return pids
}

// stopPids sends SIGTERM (mysqld shuts down cleanly on it), waits up to grace, then SIGKILLs
// what is left and waits for it to go.
func stopPids(pids []int, grace time.Duration) error {
	_, err := Cgroups{}.Stop("", pids, grace)
	return err
}

func alive(pids []int) []int { return aliveIn(procfs.FS{}, pids) }

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// OrphanStates describes the labs with namespaces, a cgroup or tagged iptables rules but no
// state file in stateDir (a lab killed before it could save, or whose state file was removed), so
// DownState can remove them like any other.
func OrphanStates(ctx context.Context, r execx.Runner, stateDir string, proc procfs.FS) []*State {
	byID := map[string]*State{}
	get := func(rid string) *State {
		if byID[rid] == nil {
			byID[rid] = &State{RunID: rid, Namespaces: map[string]string{}}
		}
		return byID[rid]
	}
	for rid, roles := range Orphans(ctx, r, stateDir) {
		st := get(rid)
		for _, role := range roles {
			st.Hosts = append(st.Hosts, role)
			st.Namespaces[role] = NSName(rid, role)
		}
	}
	if cg, err := DetectCgroups(proc); err == nil {
		for _, rid := range OrphanCgroups(cg, stateDir) {
			get(rid).Cgroup = cg.Dir(rid)
		}
	}
	known := map[string]bool{}
	ids, _ := List(stateDir)
	for _, id := range ids {
		known[id] = true
	}
	for rid, rules := range orphanRules(ctx, r, known) {
		get(rid).Outside = &Outside{Rules: rules}
	}
	out := make([]*State, 0, len(byID))
	for _, st := range byID {
		st.TempDir = FindTempDir(st.RunID)
		out = append(out, st)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].RunID < out[j].RunID })
	return out
}
