package lab

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/wirelab/wirelab/internal/execx"
	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/procfs"
)

// Options says what lab to build.
type Options struct {
	RunID     string   // "" = a fresh random id
	Hosts     []string // end hosts besides the wire; default client + server
	Condition link.Condition
	Shaper    link.Shaper // auto = detect
	// Congestion is the TCP congestion control every host's connections use (set on its
	// default route): "" = LabCongestion, "kernel" = the kernel's default. Resolved with
	// ResolveCongestion.
	Congestion string
	StateDir   string // /run/wirelab
	Self       string // the wirelab binary, for helpers started inside hosts
	Runner     execx.Runner
	Logger     *slog.Logger
	// Owner is the run or study making the lab (SelfOwner); nil for a lab by hand.
	Owner *Owner
	// CgroupRoot is the cgroup v2 directory under which the lab gets its cgroup: "" =
	// detect (<cgroup2 mount>/wirelab), CgroupsOff = none.
	CgroupRoot string
	// Outside, when set, makes the server host a router to an existing server at this
	// address instead of a database host (see reachOutside); the lab must have a server host.
	Outside *Target
	// Proc is this machine's /proc (its zero value is): cgroups, congestion controls and
	// the wire's delayer are read there.
	Proc procfs.FS
}

// CgroupsOff as Options.CgroupRoot makes a lab without a cgroup.
const CgroupsOff = "off"

// Lab is a lab that is up. Down removes it.
type Lab struct {
	State *State
	// runner starts commands inside the lab's cgroup (when it has one), so a daemon a
	// command leaves behind (the delayer) is the lab's; base is the plain one.
	runner, base execx.Runner
	log          *slog.Logger
	proc         procfs.FS
}

// Runner is the command runner the lab uses; what it starts is in the lab's cgroup.
func (l *Lab) Runner() execx.Runner { return l.runner }

// Logger is the lab's logger.
func (l *Lab) Logger() *slog.Logger { return l.log }

// NewRunID returns a short random id; namespace names must stay short and unique.
func NewRunID() string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// NSName is the namespace name of role in lab id.
func NSName(id, role string) string { return "wl-" + id + "-" + role }

// hostSysctls lets a host accept thousands of connections at once (sysbench 1.0.20 gives
// 2048 threads 30 s to connect) and reuse ports quickly between points.
var hostSysctls = []string{
	"net.core.somaxconn=65535",
	"net.ipv4.tcp_max_syn_backlog=65535",
	"net.ipv4.ip_local_port_range=1024 65000",
	"net.ipv4.tcp_tw_reuse=1",
	// Room for bandwidth x delay: 1gbit at 250 ms RTT needs ~31 MB in flight, and the
	// receiver advertises only part of its buffer as window (tcp_adv_win_scale), so 64 MB.
	"net.ipv4.tcp_rmem=4096 131072 67108864",
	"net.ipv4.tcp_wmem=4096 16384 67108864",
}

// Up builds the lab: namespaces, veth pairs through the wire host, addresses, routes,
// sysctls and the link condition. State is saved before each step so that a failure, or a
// kill -9 at any point, leaves something Down can remove; on error Up removes what it made.
func Up(ctx context.Context, o Options) (l *Lab, err error) {
	if o.Runner == nil {
		o.Runner = execx.OS{}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.RunID == "" {
		o.RunID = NewRunID()
	}
	hosts := o.Hosts
	if len(hosts) == 0 {
		hosts = []string{Client, Server}
	}
	for _, h := range hosts {
		if _, ok := HostAddr[h]; !ok {
			return nil, fmt.Errorf("lab host %q: want one of client, server, replica", h)
		}
	}
	congestion, err := ResolveCongestion(o.Proc, o.Congestion)
	if err != nil {
		return nil, err
	}
	if o.Outside != nil && !slices.Contains(hosts, Server) {
		return nil, fmt.Errorf("reach %s: the lab has no server host to route through", o.Outside.Addr)
	}
	if err := os.MkdirAll(o.StateDir, 0o755); err != nil {
		return nil, fmt.Errorf("create state dir: %w", err)
	}
	st := &State{
		RunID: o.RunID, Created: time.Now().UTC(),
		Namespaces: map[string]string{}, WireIfaces: map[string]string{},
		Condition: o.Condition, Path: filepath.Join(o.StateDir, o.RunID+".json"), Owner: o.Owner,
		Congestion: congestion,
	}
	if _, err := os.Stat(st.Path); err == nil {
		return nil, fmt.Errorf("lab %s already exists (%s)", o.RunID, st.Path)
	}
	st.TempDir, err = os.MkdirTemp("", "wirelab-"+o.RunID+"-")
	if err != nil {
		return nil, fmt.Errorf("create lab temp dir: %w", err)
	}
	if err := os.Chmod(st.TempDir, 0o755); err != nil { // mysqld runs as mysql inside it
		return nil, fmt.Errorf("create lab temp dir: %w", err)
	}
	if err := st.Save(); err != nil {
		_ = os.RemoveAll(st.TempDir)
		return nil, err
	}
	l = &Lab{State: st, runner: o.Runner, base: o.Runner, log: o.Logger.With("lab", o.RunID), proc: o.Proc}
	l.makeCgroup(o.CgroupRoot)
	defer func() {
		if err != nil {
			if derr := l.Down(context.WithoutCancel(ctx)); derr != nil {
				err = errors.Join(err, fmt.Errorf("tear down half-built lab: %w", derr))
			}
		}
	}()
	if err := l.build(ctx, hosts); err != nil {
		return l, err
	}
	if o.Outside != nil {
		if err := l.reachOutside(ctx, *o.Outside); err != nil {
			return l, err
		}
	}
	if err := l.Shape(ctx, o.Condition, o.Shaper, o.Self); err != nil {
		return l, err
	}
	return l, nil
}

// FindTempDir returns lab id's temp dir (Up makes it as $TMPDIR/wirelab-<id>-<random>), for
// a lab whose state file, which names it, is gone; "" when there is none or several.
func FindTempDir(id string) string {
	m, _ := filepath.Glob(filepath.Join(os.TempDir(), "wirelab-"+id+"-*"))
	if len(m) != 1 {
		return ""
	}
	return m[0]
}

// makeCgroup gives the lab its cgroup, or says in the log why it has none: then teardown
// finds the lab's processes through its namespaces only, as long as they have names.
func (l *Lab) makeCgroup(root string) {
	if root == CgroupsOff {
		return
	}
	cg := Cgroups{Root: root}
	var err error
	if root == "" {
		cg, err = DetectCgroups(l.proc)
	}
	if err == nil {
		l.State.Cgroup, err = cg.Create(l.State.RunID)
	}
	if err == nil {
		err = l.State.Save()
	}
	if err != nil {
		l.State.Cgroup = ""
		l.log.Warn("no cgroup for the lab: teardown finds its processes by namespace only", "err", err)
		return
	}
	l.runner = inCgroup(l.base, l.State.Cgroup)
}

// inCgroup wraps r so that its commands start in the cgroup dir, when r knows how.
func inCgroup(r execx.Runner, dir string) execx.Runner {
	if cr, ok := r.(interface{ WithCgroup(string) execx.Runner }); ok && dir != "" {
		return cr.WithCgroup(dir)
	}
	return r
}

func (l *Lab) build(ctx context.Context, hosts []string) error {
	st, r := l.State, l.runner
	roles := append([]string{Wire}, hosts...)
	for _, role := range roles {
		ns := NSName(st.RunID, role)
		st.Namespaces[role] = ns // recorded before creation: Down tolerates a missing one
		st.Hosts = append(st.Hosts, role)
		if err := st.Save(); err != nil {
			return err
		}
		if _, err := r.Run(ctx, "ip", "netns", "add", ns); err != nil {
			return fmt.Errorf("create host %s: %w", role, err)
		}
		if _, err := r.Run(ctx, "ip", "-n", ns, "link", "set", "lo", "up"); err != nil {
			return fmt.Errorf("bring up lo in %s: %w", role, err)
		}
	}
	wire := st.NS(Wire)
	if err := l.sysctl(ctx, wire, "net.ipv4.ip_forward=1"); err != nil {
		return err
	}
	for _, role := range hosts {
		ns, wif := st.NS(role), "to-"+role
		st.WireIfaces[role] = wif
		if err := st.Save(); err != nil {
			return err
		}
		steps := [][]string{
			{"ip", "link", "add", "eth0", "netns", ns, "type", "veth", "peer", "name", wif, "netns", wire},
			{"ip", "-n", ns, "addr", "add", HostAddr[role] + "/24", "dev", "eth0"},
			{"ip", "-n", wire, "addr", "add", WireAddr[role] + "/24", "dev", wif},
			{"ip", "-n", ns, "link", "set", "eth0", "up"},
			{"ip", "-n", wire, "link", "set", wif, "up"},
			append([]string{"ip", "-n", ns, "route", "add", "default", "via", WireAddr[role]}, routeCongestion(st.Congestion)...),
		}
		for _, s := range steps {
			if _, err := r.Run(ctx, s[0], s[1:]...); err != nil {
				return fmt.Errorf("wire host %s: %w", role, err)
			}
		}
		if err := l.sysctl(ctx, ns, hostSysctls...); err != nil {
			return err
		}
	}
	return nil
}

func (l *Lab) sysctl(ctx context.Context, ns string, kv ...string) error {
	name, args := execx.InNetns(ns, "sysctl", append([]string{"-q", "-w"}, kv...)...)
	if _, err := l.runner.Run(ctx, name, args...); err != nil {
		return fmt.Errorf("set sysctls in %s (%s): %w", ns, strings.Join(kv, " "), err)
	}
	return nil
}

// WireSpec is the wire host as the link shapers see it.
func (l *Lab) WireSpec(self string) link.Wire {
	st := l.State
	w := link.Wire{NS: st.NS(Wire), StateDir: st.TempDir, Self: self, Proc: l.proc}
	for _, role := range st.Hosts {
		if wif, ok := st.WireIfaces[role]; ok {
			w.Ifaces = append(w.Ifaces, wif)
		}
	}
	return w
}

// Shape applies (or replaces) the link condition on the wire and records it.
func (l *Lab) Shape(ctx context.Context, c link.Condition, shaper link.Shaper, self string) error {
	applied, err := link.Apply(ctx, l.runner, l.WireSpec(self), c, shaper)
	if err != nil {
		return fmt.Errorf("shape the wire (%s): %w", c, err)
	}
	// Below link.OffloadMinRate the host ends must not hand the wire TSO/GSO super-packets:
	// HTB would count one as a single burst. Segment at the source there; from it up (and
	// unlimited) keep offloads on, or the delayer pays a netlink round trip per frame.
	onOff := "off"
	if link.Offloads(c) {
		onOff = "on"
	}
	for _, role := range l.State.Hosts {
		if role == Wire {
			continue
		}
		if _, err := l.Exec(ctx, role, "ethtool", "-K", "eth0", "tso", onOff, "gso", onOff); err != nil {
			return fmt.Errorf("set offloads on %s: %w", role, err)
		}
	}
	st := l.State
	st.Condition, st.Shaper, st.ReadBack = c, applied.Shaper, applied.ReadBack
	st.Procs = removeProc(st.Procs, "delayer")
	if applied.DelayerPid > 0 {
		st.Procs = append(st.Procs, Proc{Name: "delayer", Host: Wire, Pid: applied.DelayerPid})
	}
	return st.Save()
}

func removeProc(ps []Proc, name string) []Proc {
	out := ps[:0]
	for _, p := range ps {
		if p.Name != name {
			out = append(out, p)
		}
	}
	return out
}
