package cli

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/wirelab/wirelab/internal/lab"
)

func cmdDown(p *Process, args []string) error {
	fs := newFlagSet(p, "down", "remove everything a lab made: processes, hosts, wire, temp files (also after kill -9)",
		"wirelab down\nwirelab down --lab 3f9a1c\nwirelab down --all")
	id := fs.String("lab", "", "lab run id (needed only when several labs are up)")
	all := fs.Bool("all", false, "remove every lab on this machine, and lab namespaces left without a state file")
	if err := parseFlags(fs, args); err != nil {
		return err
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
	for _, rid := range ids {
		st, err := lab.Load(p.StateDir, rid)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if err := lab.DownState(ctx, p.Runner, st, p.Logger); err != nil {
			errs = append(errs, fmt.Errorf("down %s: %w", rid, err))
			continue
		}
		fmt.Fprintf(p.Stdout, "lab %s removed\n", rid)
	}
	// Namespaces with no state file (state removed by hand, or another state dir): only
	// with --all, or when --lab names one, so a private state dir never reaps other labs.
	orphans := map[string][]string{}
	if *all || *id != "" {
		orphans = lab.Orphans(ctx, p.Runner, p.StateDir)
	}
	orphanIDs := make([]string, 0, len(orphans))
	for rid := range orphans {
		orphanIDs = append(orphanIDs, rid)
	}
	sort.Strings(orphanIDs)
	for _, rid := range orphanIDs {
		if !*all && *id != rid {
			continue
		}
		st := &lab.State{RunID: rid, Namespaces: map[string]string{}}
		for _, role := range orphans[rid] {
			st.Hosts = append(st.Hosts, role)
			st.Namespaces[role] = lab.NSName(rid, role)
		}
		if err := lab.DownState(ctx, p.Runner, st, p.Logger); err != nil {
			errs = append(errs, fmt.Errorf("down orphan %s: %w", rid, err))
			continue
		}
		ids = append(ids, rid)
		fmt.Fprintf(p.Stdout, "lab %s removed (it had no state file)\n", rid)
	}
	if len(ids) == 0 && len(errs) == 0 {
		fmt.Fprintln(p.Stdout, "no lab is up: nothing to remove")
	}
	return errors.Join(errs...)
}
