package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/wirelab/wirelab/internal/lab"
)

// How long `down --force` lets a live owner tear its own lab down: a second interrupt after
// ownerSecondTerm (abort the point), SIGKILL after ownerPatience.
var (
	ownerSecondTerm = 2 * time.Second
	ownerPatience   = 60 * time.Second
)

func cmdDown(p *Process, args []string) error {
	fs := newFlagSet(p, "down", "remove everything a lab made: processes, hosts, wire, temp files (also after kill -9)",
		"wirelab down\nwirelab down --lab 3f9a1c\nwirelab down --all\nwirelab down --lab 3f9a1c --force   # a lab a running study owns: stop the study first")
	id := addLabFlag(fs)
	all := fs.Bool("all", false, "remove every lab on this machine, and lab namespaces and cgroups left without a state file")
	force := fs.Bool("force", false, "also remove labs a running run or study owns: stop it first (it tears its own lab down; SIGKILL after 60s)")
	hf := addHostsFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("down: unexpected argument %q", fs.Arg(0))
	}
	if hf.given() {
		return downHosts(p, fs, hf)
	}
	if given(fs, "insecure-host-key") || given(fs, "dry-run") || given(fs, "deadman-ttl") {
		return usagef("down: --insecure-host-key, --dry-run and --deadman-ttl apply only with --hosts")
	}
	if err := requireRoot(p); err != nil {
		return err
	}
	ctx := context.Background()
	var ids []string
	if *all {
		var err error
		if ids, err = lab.List(p.StateDir); err != nil {
			return err
		}
	} else {
		st, err := lab.Load(p.StateDir, *id)
		switch {
		case errors.Is(err, lab.ErrNoLab):
		case err != nil:
			return fmt.Errorf("down: %w", err)
		default:
			ids = []string{st.RunID}
		}
	}
	var errs []error
	removed := 0
	for _, rid := range ids {
		st, err := lab.Load(p.StateDir, rid)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if err := downLab(ctx, p, st, *force); err != nil {
			errs = append(errs, fmt.Errorf("down %s: %w", rid, err))
			if errors.Is(err, lab.ErrOwned) {
				fmt.Fprintf(p.Stdout, "lab %s skipped: it belongs to %s\n", rid, st.Owner)
			}
			continue
		}
		removed++
		fmt.Fprintf(p.Stdout, "lab %s removed\n", rid)
	}
	// Namespaces and cgroups with no state file (state removed by hand, or another state
	// dir): only with --all, or when --lab names one, so a private state dir never reaps
	// other labs.
	if *all || *id != "" {
		for _, st := range lab.OrphanStates(ctx, p.Runner, p.StateDir, p.proc()) {
			if !*all && *id != st.RunID {
				continue
			}
			if err := lab.DownState(ctx, p.Runner, st, p.Logger); err != nil {
				errs = append(errs, fmt.Errorf("down orphan %s: %w", st.RunID, err))
				continue
			}
			removed++
			fmt.Fprintf(p.Stdout, "lab %s removed (it had no state file)\n", st.RunID)
		}
	}
	if removed == 0 && len(errs) == 0 {
		fmt.Fprintln(p.Stdout, "no lab is up: nothing to remove")
	}
	return errors.Join(errs...)
}

// downLab removes one lab. A lab whose owner (the run or study that made it) still runs is
// refused, or with force the owner is stopped first: it tears its own lab down, and what
// it leaves is removed here.
func downLab(ctx context.Context, p *Process, st *lab.State, force bool) error {
	if o, ok := st.LiveOwner(p.proc()); ok {
		if !force {
			return st.CheckOwner(p.proc(), "stop it (it tears its lab down) and remove the lab")
		}
		fmt.Fprintf(p.Stderr, "lab %s: stopping its owner %s so it tears its lab down\n", st.RunID, o)
		killed, err := lab.StopOwner(p.proc(), *o, ownerSecondTerm, ownerPatience)
		if err != nil {
			return err
		}
		if killed {
			fmt.Fprintf(p.Stderr, "lab %s: its owner did not exit within %s and was killed\n", st.RunID, ownerPatience)
		}
	}
	// Whatever the owner left (all of it after a SIGKILL); the state may be gone already.
	return lab.DownState(ctx, p.Runner, st, p.Logger)
}
