package lab

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/wirelab/wirelab/internal/execx"
	"github.com/wirelab/wirelab/internal/machinelock"
	"github.com/wirelab/wirelab/internal/result"
)

// ClaimOptions says who claims the machine for a measurement and how.
type ClaimOptions struct {
	// LockDir holds the measurement lock: one directory for the whole machine (/run/wirelab),
	// whatever state directory a lab uses, so labs with private state directories (tests,
	// bench scripts) still measure one at a time. "" = StateDir.
	LockDir  string
	StateDir string       // the labs' state files, to see which other labs are up
	Command  string       // the wirelab subcommand measuring, e.g. "study bandwidth"
	NoWait   bool         // fail with machinelock.ErrBusy instead of waiting
	Progress io.Writer    // where "waiting for ..." is printed
	Runner   execx.Runner // lists the labs' namespaces; nil = execx.OS
}

// Claim is what a run or study holds while it measures: the machine's measurement lock
// (one measurement at a time) and the owner identity it records in the lab it makes.
// Release it after the lab is down, so the next measurement starts on a quiet machine.
type Claim struct {
	Owner  *Owner
	lock   *machinelock.Lock
	o      ClaimOptions
	lab    string
	others map[string]bool
}

// ClaimMachine takes the measurement lock, waiting for the measurement that holds it unless
// o.NoWait (then a *machinelock.BusyError names it). ctx ends the wait.
func ClaimMachine(ctx context.Context, o ClaimOptions) (*Claim, error) {
	if o.Runner == nil {
		o.Runner = execx.OS{}
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	owner, err := SelfOwner(o.Command)
	if err != nil {
		return nil, err
	}
	if o.LockDir == "" {
		o.LockDir = o.StateDir
	}
	lock, err := machinelock.Acquire(ctx, o.LockDir, machinelock.Holder{Command: o.Command}, !o.NoWait,
		func(h machinelock.Holder) {
			fmt.Fprintf(o.Progress, "waiting for %s (one measurement at a time on this machine; --no-wait fails instead)\n", h)
		})
	if err != nil {
		return nil, err
	}
	c := &Claim{Owner: owner, lock: lock, o: o}
	c.others = c.labsUp(ctx)
	if ids := slices.Sorted(maps.Keys(c.others)); len(ids) > 0 {
		fmt.Fprintf(o.Progress, "note: labs up outside any measurement share the CPUs: %s (the report records it)\n",
			strings.Join(ids, ", "))
	}
	return c, nil
}

// SetLab records the lab the claim measures in, so a waiter can name it.
func (c *Claim) SetLab(id string) error {
	c.lab = id
	return c.lock.SetLab(id)
}

// Machine is what the report records about sharing the machine: how long the claim waited
// and for whom, and the other labs up when it started or now.
func (c *Claim) Machine(ctx context.Context) *result.Machine {
	m := &result.Machine{Exclusive: true}
	if w := c.lock.WaitedFor; w != nil {
		m.WaitedS, m.WaitedFor = c.lock.Waited.Seconds(), w.String()
	}
	all := map[string]bool{}
	for id := range c.others {
		all[id] = true
	}
	for id := range c.labsUp(ctx) {
		all[id] = true
	}
	delete(all, c.lab)
	m.OtherLabs = slices.Sorted(maps.Keys(all))
	return m
}

// Release drops the lock; safe on nil and twice.
func (c *Claim) Release() {
	if c != nil {
		c.lock.Release()
	}
}

// labsUp is every lab on the machine: state files in the state dir and lab namespaces
// (labs of other state dirs have those too).
func (c *Claim) labsUp(ctx context.Context) map[string]bool {
	ids := map[string]bool{}
	listed, _ := List(c.o.StateDir)
	for _, id := range listed {
		ids[id] = true
	}
	for ns := range existingNamespaces(ctx, c.o.Runner) {
		if parts := strings.SplitN(ns, "-", 3); len(parts) == 3 && parts[0] == "wl" {
			ids[parts[1]] = true
		}
	}
	return ids
}
