package cli

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/inventory"
	"github.com/wirelab/wirelab/internal/remote"
	"github.com/wirelab/wirelab/internal/study"
)

// hostsFlags run a study between the user's own machines over SSH instead of the
// namespace lab (run, study bandwidth, study transport).
type hostsFlags struct {
	fs       *flag.FlagSet
	file     *string
	insecure *bool
	dryRun   *bool
	ttl      *time.Duration
}

func addHostsFlags(fs *flag.FlagSet) *hostsFlags {
	return &hostsFlags{fs: fs,
		file: fs.String("hosts", "", "run between real machines over SSH, as described in this inventory file "+
			"(docs/hosts.example.yaml): the server (MariaDB, or PostgreSQL with --engine postgres) started on the server host, sysbench on the client (and on the server host for a study's paths that stay there), the client's NIC shaped toward the server only"),
		insecure: fs.Bool("insecure-host-key", false, "with --hosts: accept any SSH host key (throwaway hosts only; known_hosts is checked otherwise)"),
		dryRun:   fs.Bool("dry-run", false, "with --hosts: print every remote command, copy and start instead of running them, then stop"),
		ttl:      fs.Duration("deadman-ttl", defaultDeadmanTTL, "with --hosts: the client's shaping is removed this long after wirelab stops renewing it (a lost connection, a kill -9)"),
	}
}

// defaultDeadmanTTL: three renewals fit in it (every TTL/3), and a lost wirelab throttles
// a real NIC for at most this long.
const defaultDeadmanTTL = 30 * time.Second

// given says whether --hosts was given.
func (h *hostsFlags) given() bool { return h != nil && *h.file != "" }

// options loads and checks the inventory and refuses what real hosts do not run, before
// anything is contacted; nil when --hosts is not given (and then the other host flags
// are refused by name).
func (h *hostsFlags) options(p *Process, b *benchFlags) (*remote.Options, error) {
	if h == nil {
		return nil, nil
	}
	if on, err := h.check(); !on || err != nil {
		return nil, err
	}
	// pgbench's progress comes on its standard error and its latencies in log files, which
	// the SSH launcher does not bring back: the load on real hosts is sysbench's.
	if *b.driver.driver == study.DriverPgbench {
		return nil, usagef("--hosts: --driver pgbench runs in the namespace lab only; on real hosts the load is sysbench's (its pgsql driver with --engine postgres): drop --driver and --scale, or drop --hosts")
	}
	k, err := b.engine.kind()
	if err != nil {
		return nil, err
	}
	o, err := h.load(p, k)
	if err != nil {
		return nil, err
	}
	if _, err := o.Inventory.TheClient(); err != nil {
		return nil, usagef("--hosts: %s: %v", o.Inventory.Path, err)
	}
	return o, nil
}

// check refuses the other host flags without --hosts, and with it the flags real hosts
// do not take; it says whether --hosts was given.
func (h *hostsFlags) check() (bool, error) {
	if !h.given() {
		for _, n := range []string{"insecure-host-key", "dry-run", "deadman-ttl"} {
			if given(h.fs, n) {
				return false, usagef("--%s applies only with --hosts", n)
			}
		}
		return false, nil
	}
	for _, n := range []string{"server-dsn", "server-password-file", "server-tls-dir", "shaper"} {
		if given(h.fs, n) {
			return true, usagef("--hosts: --%s does not apply on real hosts (the inventory names the server; the client's NIC is shaped with HTB, and netem or wirelab's delay line for delay); drop it", n)
		}
	}
	return true, nil
}

// load checks the flags every study on hosts shares, loads the inventory and checks that
// its server starts an engine k server; it contacts nobody.
func (h *hostsFlags) load(p *Process, k engine.Kind) (*remote.Options, error) {
	if *h.ttl < 3*time.Second || *h.ttl > time.Hour {
		return nil, usagef("--deadman-ttl %s: want 3s..1h, e.g. 30s", *h.ttl)
	}
	home, _ := os.UserHomeDir()
	inv, err := inventory.Load(*h.file, home)
	if err != nil {
		return nil, usagef("--hosts: %v", err)
	}
	if err := remote.CheckServer(inv, k); err != nil {
		return nil, &UsageError{err}
	}
	o := &remote.Options{Inventory: inv, InsecureHostKey: *h.insecure, Self: p.Self,
		TTL: *h.ttl, Logger: p.Logger}
	if *h.dryRun {
		o.DryRun = p.Stdout
	}
	return o, nil
}

// run runs st on the hosts (o, from options), or with --dry-run prints what that would do
// on them; without --hosts (o nil) it runs st in the namespace lab.
func (h *hostsFlags) run(p *Process, o *remote.Options, st study.Study, m measureOptions) error {
	if o == nil {
		return runStudy(p, st, m)
	}
	if o.DryRun == nil {
		m.Open = remote.Opener(*o)
		return runStudy(p, st, m)
	}
	fmt.Fprintf(p.Stderr, "dry run: the commands wirelab would run on %s's hosts; nothing is changed\n", o.Inventory.Path)
	return remote.DryRun(context.Background(), *o, st)
}

// downHosts removes what wirelab made on an inventory's hosts (`down --hosts`): every
// wirelab directory and its processes, and the client NIC's shaping and dead-man switch.
func downHosts(p *Process, fs *flag.FlagSet, hf *hostsFlags) error {
	for _, n := range []string{"lab", "all", "force", "deadman-ttl"} {
		if given(fs, n) {
			return usagef("down --hosts: --%s does not apply (every wirelab directory on the inventory's hosts is removed); drop it", n)
		}
	}
	home, _ := os.UserHomeDir()
	inv, err := inventory.Load(*hf.file, home)
	if err != nil {
		return usagef("--hosts: %v", err)
	}
	o := remote.Options{Inventory: inv, InsecureHostKey: *hf.insecure, Logger: p.Logger}
	if *hf.dryRun {
		o.DryRun = p.Stdout
	}
	if err := remote.Down(context.Background(), o); err != nil {
		return fmt.Errorf("down --hosts %s: %w", inv.Path, err)
	}
	fmt.Fprintf(p.Stdout, "removed wirelab's directories, processes and shaping on %d hosts of %s\n", len(inv.Hosts), inv.Path)
	return nil
}
