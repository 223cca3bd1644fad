package cli

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/hosts"
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
	// inv is the inventory options loaded, for what comes after it (existing).
	inv *inventory.Inventory
}

func addHostsFlags(fs *flag.FlagSet) *hostsFlags {
	return &hostsFlags{fs: fs,
		file: fs.String("hosts", "", "run between real machines over SSH, as described in this inventory file "+
			"(docs/hosts.example.yaml): the server (MariaDB, or PostgreSQL with --engine postgres) started on the server host, or an existing MySQL/MariaDB server the inventory names by dsn, sysbench on the client (and on the server host for a study's paths that stay there), the client's NIC shaped toward the server only; "+
			"with several clients (run, study bandwidth) each point's threads are split among them, the remainder to the first, and their results merged"),
		insecure: fs.Bool("insecure-host-key", false, "with --hosts: accept any SSH host key (throwaway hosts only; known_hosts is checked otherwise)"),
		dryRun:   fs.Bool("dry-run", false, "with --hosts: print every remote command, copy and start instead of running them, then stop"),
		ttl:      fs.Duration("deadman-ttl", hosts.DefaultDeadmanTTL, "with --hosts: each client's shaping is removed this long after wirelab stops renewing it (a lost connection, a kill -9)"),
	}
}

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
	if b.load.Driver() == study.DriverPgbench {
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
	if _, err := o.Inventory.Clients(); err != nil {
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
	if err := hosts.CheckDeadmanTTL(*h.ttl); err != nil {
		return nil, &UsageError{err}
	}
	home, _ := os.UserHomeDir()
	inv, err := inventory.Load(*h.file, home)
	if err != nil {
		return nil, usagef("--hosts: %v", err)
	}
	if err := remote.CheckServer(inv, k); err != nil {
		return nil, &UsageError{err}
	}
	h.inv = inv
	o := &remote.Options{Inventory: inv, InsecureHostKey: *h.insecure, Self: p.Self,
		TTL: *h.ttl, Logger: p.Logger, AgentSocket: p.env(sshAgentEnv)}
	if *h.dryRun {
		o.DryRun = p.Stdout
	}
	return o, nil
}

// replica loads the inventory of a study of a source and its replica (replication,
// sync) after --hosts is checked: it refuses --check-wire given (`link check`, iperf3 on
// both hosts, is not run on real hosts, as run and bandwidth leave it out) and otherwise
// turns the study's default check off (checkWire), and it wants the inventory's replica
// host for an engine k server. It contacts nobody.
func (h *hostsFlags) replica(p *Process, k engine.Kind, checkWire *bool) (*remote.Options, error) {
	if given(h.fs, "check-wire") && *checkWire {
		return nil, usagef("--hosts: --check-wire: the wire check (iperf3 between the hosts) is not run on real hosts: drop --check-wire")
	}
	*checkWire = false
	ho, err := h.load(p, k)
	if err != nil {
		return nil, err
	}
	if _, err := ho.Inventory.ReplicaFor(string(k)); err != nil {
		return nil, usagef("--hosts: %s: %v", ho.Inventory.Path, err)
	}
	return ho, nil
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
	o := remote.Options{Inventory: inv, InsecureHostKey: *hf.insecure, Logger: p.Logger, AgentSocket: p.env(sshAgentEnv)}
	if *hf.dryRun {
		o.DryRun = p.Stdout
	}
	o.DropExisting = dropLeftTables(p, inv)
	if err := remote.Down(context.Background(), o); err != nil {
		return fmt.Errorf("down --hosts %s: %w", inv.Path, err)
	}
	n, skipped := 0, ""
	for _, h := range inv.Hosts {
		if h.Existing() {
			skipped = fmt.Sprintf(" (not %s: an existing server's host, which wirelab does not log in to)", h.Name)
			continue
		}
		n++
	}
	fmt.Fprintf(p.Stdout, "removed wirelab's directories, processes and shaping on %d hosts of %s%s\n", n, inv.Path, skipped)
	return nil
}

// existingServer is the inventory's existing server (server: {dsn: ...}), logged in to
// from this machine as --server-dsn's is (a refused login, or a database that already
// has the data set's tables, is refused before any host is touched); nil when the
// inventory's server is one wirelab starts. A dry run contacts nobody: the server is
// the one the DSN names, not logged in to. tls says whether a point uses TLS.
func (h *hostsFlags) existingServer(p *Process, tables int, tls bool) (*engine.External, error) {
	sv := h.inv.Role(inventory.Server)[0]
	if !sv.Existing() {
		return nil, nil
	}
	where := fmt.Sprintf("--hosts %s: host %s", h.inv.Path, sv.Name)
	switch {
	case tls:
		return nil, usagef("%s: TLS to an existing server (server.dsn) is not set up over --hosts: its CA and client certificates would have to reach the client host; drop --tls (study bandwidth: --experiments n1,n2)", where)
	case given(h.fs, "buffer-pool"):
		return nil, usagef("%s: --buffer-pool sizes a server wirelab starts; the existing server (server.dsn) keeps its own: drop it", where)
	}
	cfg, err := remote.ExistingConfig(h.inv, p.Getenv)
	if err != nil {
		return nil, err
	}
	if *h.dryRun {
		return engine.UncheckedExternal(*cfg, ""), nil
	}
	return study.OpenExisting(context.Background(), cfg, tables, where+": server.dsn")
}

// dropLeftTables is `down --hosts`'s remote.Options.DropExisting for an inventory with an
// existing server: it logs in from this machine and drops the tables a run recorded. The
// password is read only then: a down that finds no such tables needs none.
func dropLeftTables(p *Process, inv *inventory.Inventory) func(context.Context, []string) error {
	if !inv.Role(inventory.Server)[0].Existing() {
		return nil
	}
	return func(ctx context.Context, tables []string) error {
		cfg, err := remote.ExistingConfig(inv, p.Getenv)
		if err != nil {
			return err
		}
		x, err := engine.OpenExternal(ctx, *cfg)
		if err != nil {
			return err
		}
		defer x.Stop(ctx)
		if err := x.DropTables(ctx, tables); err != nil {
			return err
		}
		fmt.Fprintf(p.Stdout, "dropped %s, left by a run, in %s on %s\n", strings.Join(tables, ", "), cfg.DSN.DB, cfg.DSN.Addr())
		return nil
	}
}
