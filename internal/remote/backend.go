package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/execx"
	"github.com/wirelab/wirelab/internal/hosts"
	"github.com/wirelab/wirelab/internal/inventory"
	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/result"
	"github.com/wirelab/wirelab/internal/study"
	"github.com/wirelab/wirelab/internal/sysbench"
)

// Options say how to reach an inventory's hosts and what to leave where.
type Options struct {
	Inventory       *inventory.Inventory
	InsecureHostKey bool
	// DryRun, when set, receives every remote command, copy and start instead of the
	// host: nothing is changed anywhere.
	DryRun io.Writer
	// Self is this wirelab binary, copied to every host for its agents.
	Self string
	// TTL is the dead-man switch's: how long a shaped NIC outlives a silent wirelab.
	TTL    time.Duration
	Logger *slog.Logger
	// Dial opens the TCP connection to a host's sshd; nil = a plain dial (tests reach
	// hosts inside network namespaces through it).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Timeout bounds each host's connect and handshake; 0 = 10 s.
	Timeout time.Duration
	// AgentSocket is the ssh-agent socket the command found in its environment
	// (SSH_AUTH_SOCK); "" = no agent, the inventory's key files only.
	AgentSocket string
	// DropExisting drops tables of the inventory's existing server (server.dsn) that a
	// run recorded and did not drop: what `down --hosts` does with them. nil = none is
	// dropped (and a record found is an error naming them).
	DropExisting func(ctx context.Context, tables []string) error
}

// host is one inventory host, connected and staged.
type host struct {
	inv   inventory.Host
	h     hosts.Host
	stage hosts.Staged
	// login runs commands as the inventory's user itself, never through sudo.
	login execx.Runner
}

// Backend is a study's clients and server on the user's own machines, reached over SSH:
// each client's NIC is shaped toward the server (hosts.RemoteLink, under a dead-man
// switch of its own), sysbench runs on the clients, MariaDB or PostgreSQL (an Engine) on
// the server, and `wirelab agent sample` on every host streams the per-second wire and
// CPU counters back. With several clients it is a study.Fleet: a point's threads are
// split among them. For the replication and sync studies the host across the wire is the
// inventory's replica instead of its clients: it runs the replica's MariaDB and its NIC
// is the one shaped.
type Backend struct {
	o  Options
	id string
	// clients are the hosts across the wire from the server: the inventory's client hosts
	// in file order, or its replica when far is lab.Replica; links and targets their
	// shaping, index for index.
	clients []*host
	far     string // the lab role the first of clients stands for: lab.Client or lab.Replica
	server  *host
	links   []*hosts.RemoteLink
	targets []hosts.ShapeTarget
	cond    link.Condition
	// engine is the server's, as --engine and the inventory's start: name it.
	engine Engine
	// serverPid is the server's main pid on the server host, once started; farPid the
	// far host's own server's (the replica), 0 when it runs none.
	serverPid, farPid int
	// facts are the client's and server's hosts as their agents read them.
	facts []result.Host
	log   *slog.Logger

	mu     sync.Mutex
	procs  []hosts.Proc // long-running processes to stop at Down, in start order
	closed bool
	gone   map[int]uint64 // by far host: reads its sample agents found a shaped class missing
}

// Opener opens a Backend for a study's needs: study.Session's Open.
func Opener(o Options) study.Opener {
	return func(ctx context.Context, needs study.Needs, _ *lab.Owner) (study.Backend, error) {
		return Open(ctx, o, needs)
	}
}

// Open connects to the inventory's client and server, checks everything a study needs
// there before it changes anything (the NIC, the programs, netem or NFQUEUE for delay),
// then stages wirelab on both. A failure after staging removes what was staged.
func Open(ctx context.Context, o Options, needs study.Needs) (*Backend, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	eng, err := supported(needs)
	if err != nil {
		return nil, err
	}
	inv := o.Inventory
	if err := CheckServer(inv, eng.Spec().Kind); err != nil {
		return nil, err
	}
	far := needs.Hosts[0]
	cls, err := farHosts(inv, far, eng.Spec().Kind)
	if err != nil {
		return nil, err
	}
	sv := inv.Role(inventory.Server)[0]
	if far == lab.Client {
		if err := checkClients(inv, needs); err != nil {
			return nil, err
		}
	}
	if err := checkExisting(inv, needs); err != nil {
		return nil, err
	}
	b := &Backend{o: o, id: "h" + strconv.FormatInt(time.Now().Unix(), 36), cond: needs.Condition, engine: eng,
		far: far, log: o.Logger.With("component", "remote")}
	fail := func(err error) (*Backend, error) {
		return nil, errors.Join(err, b.Down(context.WithoutCancel(ctx)))
	}
	for _, cl := range cls {
		h, err := b.connect(ctx, cl)
		if err != nil {
			return fail(err)
		}
		b.clients = append(b.clients, h)
	}
	// An existing server's host is not logged in to (it may have no SSH at all, as a
	// managed database has none): the clients' sysbench reaches the server at its DSN.
	if !sv.Existing() {
		if b.server, err = b.connect(ctx, sv); err != nil {
			return fail(err)
		}
	}
	peer, err := netip.ParseAddr(sv.PeerAddress())
	if err != nil {
		return fail(fmt.Errorf("%s: host %s: the server's data address %q must be an IP address (the shaping matches it): set data_address", inv.Path, sv.Name, sv.PeerAddress()))
	}
	if err := b.preflight(ctx, needs); err != nil {
		return fail(err)
	}
	for i, cl := range cls {
		keep := keepPorts(cl)
		if b.server != nil {
			keep = keepPorts(cl, sv)
		}
		b.targets = append(b.targets, hosts.ShapeTarget{Host: cl.Name, NIC: cl.NIC, Peer: peer, Count: true, KeepPorts: keep})
		// Replication's scenarios delay the wire (its RTTs) after a start without a
		// condition, so its delay line is found up front too.
		if needs.Condition.NeedsDelayLine() || far == lab.Replica {
			if err := b.detectDelayLine(ctx, i); err != nil {
				return fail(err)
			}
		}
		// Every plan is checked before a host is touched: delay on a kernel with neither
		// netem nor NFQUEUE is refused here, not half-way through a study.
		if err := hosts.CheckShape(b.targets[i], needs.Condition); err != nil {
			return fail(err)
		}
	}
	for _, h := range b.all() {
		if h.stage, err = hosts.Stage(ctx, h.h, o.Self); err != nil {
			return fail(err)
		}
	}
	if err := b.readAllFacts(ctx); err != nil {
		return fail(err)
	}
	if err := b.mark(ctx); err != nil {
		return fail(err)
	}
	if x := needs.Servers[0].Existing; x != nil {
		if err := b.recordTables(ctx, x, sysbench.TableNames(needs.Data.Tables)); err != nil {
			return fail(err)
		}
	}
	for i, h := range b.clients {
		b.links = append(b.links, &hosts.RemoteLink{Host: h.h, Target: b.targets[i], Dir: h.stage.Dir,
			Agent: h.stage.Agent, TTL: o.TTL, Run: b.id, Log: b.log})
	}
	if err := b.Shape(ctx, needs.Condition); err != nil {
		return fail(err)
	}
	return b, nil
}

// checkClients refuses, contacting nobody, an inventory with several clients for a study
// that loads from one host (needs.ClientThreads nil), and thread counts that do not split
// among them (study.CheckSplit).
func checkClients(inv *inventory.Inventory, needs study.Needs) error {
	cls := inv.Role(inventory.Client)
	if len(cls) <= 1 {
		return nil
	}
	names := make([]string, len(cls))
	for i, c := range cls {
		names[i] = c.Name
	}
	if needs.ClientThreads == nil {
		return fmt.Errorf("%s: %d client hosts (%s): this study loads the server from one client host; "+
			"`run` and `study bandwidth` split their load among several: keep one client in the inventory for this study",
			inv.Path, len(cls), strings.Join(names, ", "))
	}
	if err := study.CheckSplit(needs.ClientThreads, len(cls)); err != nil {
		return fmt.Errorf("%s: clients %s: %w", inv.Path, strings.Join(names, ", "), err)
	}
	return nil
}

// all are the backend's hosts that are connected: the clients, then the server.
func (b *Backend) all() []*host {
	out := append([]*host(nil), b.clients...)
	if b.server != nil {
		out = append(out, b.server)
	}
	return out
}

// detectDelayLine finds what makes delay on the i-th client: netem, else the delay line
// through NFQUEUE. A dry run cannot ask the kernel; it prints the probes and shows the
// delay line's plan, which is what a kernel without netem gets.
func (b *Backend) detectDelayLine(ctx context.Context, i int) error {
	h, t := b.clients[i], &b.targets[i]
	netem, err := hosts.DetectNetem(ctx, h.h)
	if err != nil {
		return err
	}
	if b.o.DryRun != nil {
		fmt.Fprintf(b.o.DryRun, "%s: # a dry run does not know whether this kernel has netem: shown is the plan without it (the NFQUEUE delay line); with netem the leaf is netem and no delayer starts\n", h.inv.Name)
		netem = false
	}
	t.Netem = netem
	if !netem {
		t.NFQueue = hosts.DetectNFQueue(ctx, h.h, t.Peer.Is6())
	}
	return nil
}

// supported refuses, before anything is made, what this backend does not run, and names
// the server's engine. It carries two shapes: a client and one server it starts (run,
// bandwidth, transport), loaded by sysbench; or a MariaDB source on the server host and
// its replica on the replica host (replication, sync), the tunnel's ends included.
func supported(needs study.Needs) (Engine, error) {
	if len(needs.Hosts) > 0 && needs.Hosts[0] == lab.Replica && len(needs.Servers) > 0 && !isMariaDB(needs.Servers[0].DB.Engine) {
		return nil, errors.New("--hosts: study replication --engine postgres runs in the namespace lab only (its standby is a base backup across the wire, which real hosts do not run yet): drop --engine, or drop --hosts")
	}
	if !clientShape(needs) && !replicaShape(needs) {
		return nil, errors.New("--hosts: this study needs hosts other than one client and one server, or a server and its replica; on real hosts wirelab runs `run`, `study bandwidth`, `study transport`, `study replication` and `study sync`'s MariaDB modes")
	}
	sv := needs.Servers[0]
	if d := needs.Data.Driver; d != "" && d != study.DriverSysbench {
		return nil, fmt.Errorf("--hosts: --driver %s: on real hosts the load is sysbench's; drop --hosts to run %s in the namespace lab", d, d)
	}
	return engineOf(sv.DB.Engine)
}

func isMariaDB(k engine.Kind) bool { return k == "" || k == engine.MariaDB }

// clientShape is run's, bandwidth's and transport's: a client and one server.
func clientShape(needs study.Needs) bool {
	return len(needs.Hosts) == 2 && needs.Hosts[0] == lab.Client && needs.Hosts[1] == lab.Server &&
		len(needs.Servers) == 1 && needs.Servers[0].Host == lab.Server
}

// replicaShape is replication's: a replica host across the wire from the server, with a
// server on each (PostgreSQL's study asks for the primary alone: not this shape).
func replicaShape(needs study.Needs) bool {
	return len(needs.Hosts) == 2 && needs.Hosts[0] == lab.Replica && needs.Hosts[1] == lab.Server &&
		len(needs.Servers) == 2 && needs.Servers[0].Host == lab.Server && needs.Servers[1].Host == lab.Replica
}

// farHosts are the inventory's hosts for role far: its clients, or its replica (which
// must have a nic and start an engine k server), named by hosts[i] in the error.
func farHosts(inv *inventory.Inventory, far string, k engine.Kind) ([]inventory.Host, error) {
	if far == lab.Replica {
		h, err := inv.ReplicaFor(string(k))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", inv.Path, err)
		}
		return []inventory.Host{h}, nil
	}
	cs, err := inv.Clients()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", inv.Path, err)
	}
	return cs, nil
}

// CheckServer refuses an inventory whose server is of another engine than k, the
// study's: the inventory says what the host is for, --engine what is measured, and
// neither silently overrides the other. An existing server (dsn) is MySQL/MariaDB, on a
// port other than the SSH ports the shaping leaves out. It contacts nobody.
func CheckServer(inv *inventory.Inventory, k engine.Kind) error {
	if k == "" {
		k = engine.MariaDB
	}
	file, sv := inv.Path, inv.Role(inventory.Server)[0]
	if sv.Existing() {
		return checkDSN(inv, sv, k)
	}
	if sv.Server.Start != string(k) {
		return fmt.Errorf("%s: host %s starts %s (server: {start: %s}), and --engine is %s: set start: %s there, or run with --engine %s",
			file, sv.Name, sv.Server.Start, sv.Server.Start, k, k, sv.Server.Start)
	}
	return nil
}

// checkDSN is CheckServer for an existing server sv.
func checkDSN(inv *inventory.Inventory, sv inventory.Host, k engine.Kind) error {
	if k != engine.MariaDB {
		return fmt.Errorf("%s: host %s: server.dsn names an existing MySQL/MariaDB server (%s) and --engine is %s: an existing PostgreSQL server is not measured over --hosts; "+
			"use server: {start: postgres} there, or drop --engine", inv.Path, sv.Name, engine.DSNForm, k)
	}
	d, err := engine.ParseDSN(sv.Server.DSN)
	if err != nil {
		return fmt.Errorf("%s: host %s: server.dsn: %w", inv.Path, sv.Name, err)
	}
	if slices.Contains(keepPorts(inv.Role(inventory.Client)...), uint16(d.Port)) {
		return fmt.Errorf("%s: host %s: server.dsn's port %d is a client's SSH port, which the shaping leaves out: the server's traffic would not be shaped",
			inv.Path, sv.Name, d.Port)
	}
	return nil
}

// checkExisting matches the study's server with the inventory's: an existing server
// (dsn) is the one the caller logged in to (Needs.Servers[0].Existing), and a study that
// runs anything on the server's host (a helper, a load driver over its loopback, the
// tunnel's exit) cannot measure one, as wirelab does not log in there.
func checkExisting(inv *inventory.Inventory, needs study.Needs) error {
	sv, x := inv.Role(inventory.Server)[0], needs.Servers[0].Existing
	switch {
	case x != nil && !sv.Existing():
		return errors.New("--hosts and --server-dsn: pick one (the inventory's server is the one measured)")
	case x == nil && sv.Existing():
		return fmt.Errorf("%s: host %s names an existing server (server.dsn), but the study was given no login to it", inv.Path, sv.Name)
	case x == nil:
		return nil
	}
	if needs.Tunnel {
		return fmt.Errorf("%s: host %s is an existing server (server.dsn): wirelab does not log in to its host, where the tunnel's exit would run; drop --channel tunnel",
			inv.Path, sv.Name)
	}
	onServer := needs.Servers[0].Loopback
	for _, p := range needs.Programs {
		onServer = onServer || p.Host == lab.Server
	}
	if onServer {
		return fmt.Errorf("%s: host %s is an existing server (server.dsn): wirelab does not log in to its host, and this study runs programs there; measure it with `run` or `study bandwidth`",
			inv.Path, sv.Name)
	}
	return nil
}

// keepPorts are the SSH ports between client and server, never shaped: wirelab's own
// control connections when it runs on the client.
func keepPorts(hs ...inventory.Host) []uint16 {
	var out []uint16
	for _, h := range hs {
		p := uint16(h.Port)
		if p == 0 {
			p = 22
		}
		dup := false
		for _, q := range out {
			dup = dup || q == p
		}
		if !dup {
			out = append(out, p)
		}
	}
	return out
}

// connect dials one host (or, with DryRun, stands in a printing host for it).
func (b *Backend) connect(ctx context.Context, ih inventory.Host) (*host, error) {
	sudo := hosts.NeedsSudo(ih.User)
	if b.o.DryRun != nil {
		d := &hosts.DryHost{Host: ih.Name, W: b.o.DryRun, User: ih.User, Sudo: sudo}
		return &host{inv: ih, h: d, login: d.Login()}, nil
	}
	inv := b.o.Inventory
	h, err := hosts.DialSSH(ctx, hosts.SSHConfig{Name: ih.Name, Addr: ih.SSHAddr(), User: ih.User, KeyFile: ih.Key,
		AgentSocket: b.o.AgentSocket, KnownHosts: inv.KnownHosts, InsecureHostKey: b.o.InsecureHostKey,
		Timeout: b.o.Timeout, Dial: b.o.Dial, Sudo: sudo})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", inv.Path, err)
	}
	return &host{inv: ih, h: h, login: h.Login()}, nil
}

// preflight checks, changing nothing, that wirelab is root on every host (directly or
// through `sudo -n`), that no two clients would shape each other's NIC (checkPlaces), that
// each client's NIC can be shaped and every host has the programs the backend and the
// study's own helpers (needs.Programs) run there.
func (b *Backend) preflight(ctx context.Context, needs study.Needs) error {
	for _, h := range b.all() {
		if err := b.checkLogin(ctx, h); err != nil {
			return err
		}
	}
	if err := b.checkPlaces(ctx); err != nil {
		return err
	}
	spec := b.engine.Spec()
	why, farNeeds := "the client shapes its NIC and runs sysbench", []Need{program("tc", "iproute2"),
		program("ip", "iproute2"), program("sysbench", "sysbench"), sysbenchDriver(spec.Driver)}
	if b.far == lab.Replica {
		why = "the replica host shapes its NIC and runs the replica's " + spec.Kind.Title()
		farNeeds = append(farNeeds[:2], spec.ReplicaNeeds()...)
	}
	if needs.Tunnel {
		// StartTunnel waits for each end to listen with ss.
		farNeeds = append(farNeeds, program("ss", "iproute2"))
	}
	for _, c := range b.clients {
		if err := hosts.CheckNIC(ctx, c.h, c.inv.NIC); err != nil {
			return fmt.Errorf("%s: %w", b.o.Inventory.Path, err)
		}
		if err := check(ctx, c.h, why, farNeeds); err != nil {
			return err
		}
	}
	if b.server != nil {
		serverNeeds := spec.ServerNeeds
		if needs.Tunnel {
			serverNeeds = append(slices.Clip(serverNeeds), program("ss", "iproute2"))
		}
		if err := check(ctx, b.server.h, "the server runs "+spec.Kind.Title()+" and prepares the data set over its socket", serverNeeds); err != nil {
			return err
		}
	}
	for _, p := range needs.Programs {
		h := b.hostOf(p.Host)
		if _, err := h.h.Run(ctx, "sh", "-c", program(p.Name, p.Name).Check); err != nil {
			return fmt.Errorf("host %s: %s is not installed (%s): install it (Debian: apt-get install %s), or drop what needs it", h.inv.Name, p.Name, p.Why, p.Name)
		}
	}
	return nil
}

// checkLogin is hosts.CheckLogin on h. A dry run prints the check's commands; as it
// cannot hear sudo's answer, it does not judge it.
func (b *Backend) checkLogin(ctx context.Context, h *host) error {
	err := hosts.CheckLogin(ctx, h.inv.Name, h.inv.User, h.login)
	if err != nil && b.o.DryRun != nil && errors.Is(err, hosts.ErrNoRoot) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", b.o.Inventory.Path, err)
	}
	return nil
}

// ID implements study.Backend.
func (b *Backend) ID() string { return b.id }

// Describe implements study.Backend.
func (b *Backend) Describe() string {
	cls := make([]string, len(b.clients))
	for i, c := range b.clients {
		cls[i] = fmt.Sprintf("%s (%s, NIC %s)", c.inv.Name, c.inv.Address, c.inv.NIC)
	}
	word := b.far // client or replica
	if len(cls) > 1 {
		word += "s"
	}
	if b.server == nil {
		sv := b.o.Inventory.Role(inventory.Server)[0]
		return fmt.Sprintf("hosts %s up: %s %s + existing server %s at %s (%s; its host is not logged in to), wire %s", b.id, word,
			strings.Join(cls, ", "), sv.Name, sv.PeerAddress(), sv.Server.DSN, b.cond)
	}
	return fmt.Sprintf("hosts %s up: %s %s + server %s (%s, %s), wire %s", b.id, word, strings.Join(cls, ", "),
		b.server.inv.Name, b.server.inv.PeerAddress(), b.engine.Spec().Kind.Title(), b.cond)
}

// Clients implements study.Fleet: the inventory's client hosts in file order, the first
// as lab.Client.
func (b *Backend) Clients() []study.ClientHost {
	out := make([]study.ClientHost, len(b.clients))
	for i, c := range b.clients {
		out[i] = study.ClientHost{Role: study.ClientRole(i), Name: c.inv.Name}
	}
	return out
}

// hostOf is the host of a lab role: the server's for lab.Server, the i-th client's for
// study.ClientRole(i), the replica's for lab.Replica when it is the far host, the first
// far host's otherwise.
func (b *Backend) hostOf(role string) *host {
	if role == lab.Server {
		return b.server
	}
	for i, c := range b.clients {
		if study.ClientRole(i) == role {
			return c
		}
	}
	return b.clients[0]
}

// Launcher implements study.Backend.
func (b *Backend) Launcher(role string) execx.Launcher {
	h := b.hostOf(role)
	return launcher{h: h.h, dir: h.stage.Dir}
}

// Dir implements study.Backend: wirelab's staged directory on the host, which Down (or
// `down --hosts`) removes; "" for the server's role when the server is an existing one,
// whose machine wirelab does not log in to.
func (b *Backend) Dir(role string) string {
	h := b.hostOf(role)
	if h == nil {
		return ""
	}
	return h.stage.Dir
}

// Exec implements study.Backend.
func (b *Backend) Exec(ctx context.Context, role string, argv ...string) ([]byte, error) {
	return b.hostOf(role).h.Run(ctx, argv...)
}

// StartHelper implements study.Backend: detached on the host (Host.Start), logged in its
// staged directory, stopped by Down; `down --hosts` stops it too, as its command line
// names that directory.
func (b *Backend) StartHelper(ctx context.Context, role, name string, argv []string) error {
	h := b.hostOf(role)
	p, err := h.h.Start(ctx, name, argv, path.Join(h.stage.Dir, name+".log"))
	if err != nil {
		return fmt.Errorf("start %s: %w", name, err)
	}
	b.track(p)
	return nil
}

// Shape implements study.Backend: each client's NIC toward the server, each under its
// own dead-man switch.
func (b *Backend) Shape(ctx context.Context, c link.Condition) error {
	for _, l := range b.links {
		if err := l.Shape(ctx, c); err != nil {
			return err
		}
	}
	b.cond = c
	return nil
}

// Wire implements study.Backend: egress of a client's NIC delivers to the server, its
// IFB (the ingress redirected) to the client; the read-back has the qdiscs of both and the
// delay line's rules when it runs, client by client. With several clients each direction
// is listed per client, its interface named host:iface, and the shaper names each
// client's where they differ (netem on one kernel, the delay line on another).
func (b *Backend) Wire() study.WireState {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var rb []string
	var shapers []link.Shaper
	for i, h := range b.clients {
		shaper, nic := b.links[i].Shaper(), b.targets[i].NIC
		shapers = append(shapers, shaper)
		for _, dev := range []string{nic, hosts.IFBName(nic)} {
			if out, err := h.h.Run(ctx, "tc", "qdisc", "show", "dev", dev); err == nil {
				rb = append(rb, h.inv.Name+" "+dev+": "+strings.Join(strings.Fields(string(out)), " "))
			}
		}
		if shaper.Uses(link.ShaperNfqueue) {
			if out, err := h.h.Run(ctx, hosts.DelayRules(b.targets[i])...); err == nil {
				rb = append(rb, h.inv.Name+" "+link.DelayChain+": "+strings.Join(strings.Fields(string(out)), " "))
			}
		}
	}
	return study.WireState{Shaper: b.shaperName(shapers), ReadBack: strings.Join(rb, "; "),
		Directions: func(c link.Condition) []result.LinkDirection {
			var out []result.LinkDirection
			for i, h := range b.clients {
				nic, ifb := b.targets[i].NIC, hosts.IFBName(b.targets[i].NIC)
				if len(b.clients) > 1 {
					nic, ifb = h.inv.Name+":"+nic, h.inv.Name+":"+ifb
				}
				out = append(out, link.Directions(c, shapers[i], map[string]string{lab.Server: nic, b.far: ifb})...)
			}
			return out
		}}
}

// shaperName is the clients' shaper: the one they share, else each client's by name.
func (b *Backend) shaperName(shapers []link.Shaper) string {
	same := true
	for _, s := range shapers {
		same = same && s == shapers[0]
	}
	if same {
		return string(shapers[0])
	}
	named := make([]string, len(shapers))
	for i, s := range shapers {
		named[i] = b.clients[i].inv.Name + ": " + string(s)
	}
	return strings.Join(named, ", ")
}

// CheckWire implements study.Backend: `link check` needs iperf3 on both hosts and is not
// run on real hosts; points carry no iperf3 check there. That each point ran on the
// shaping asked is ReadShaping's, read before and after every point.
func (b *Backend) CheckWire(context.Context, link.Condition, time.Duration) (*result.WireCheck, bool, error) {
	return nil, false, nil
}

// StartServer implements study.Backend: the engine's server from the host's package in a
// temp datadir, through `wirelab agent <engine>`, listening on its host's data address
// (and on 127.0.0.1 when sv.Loopback). The server host's server has its client files
// (TLS) copied to every client, where sysbench reads them; the replica host's (sv.Host
// lab.Replica) is returned as it is. An existing server (sv.Existing) is returned as it
// is. A dry run starts the agent on its printing host and returns the server as planned
// (Plan).
func (b *Backend) StartServer(ctx context.Context, sv study.Server) (engine.Server, error) {
	if sv.Existing != nil {
		return sv.Existing, nil // running already, and not wirelab's to start
	}
	if sv.DB.Upstream != nil {
		return nil, fmt.Errorf("start %s in %s: a PostgreSQL standby (a base backup across the wire) runs in the namespace lab only", sv.DB.Engine, sv.Host)
	}
	h := b.hostOf(sv.Host)
	o := b.serverOptions(sv, h)
	// The server runs as its own OS user (mysql, postgres) and must reach its datadir
	// inside wirelab's directory (0700 from mktemp): searchable, not listable; its own
	// files keep their modes.
	if _, err := h.h.Run(ctx, "chmod", "0711", h.stage.Dir); err != nil {
		return nil, fmt.Errorf("let %s's user reach %s: %w", o.Engine.Title(), h.stage.Dir, err)
	}
	start := Start
	if b.o.DryRun != nil {
		start = Plan
	}
	s, err := start(ctx, h.h, o)
	if err != nil {
		return nil, err
	}
	b.track(s)
	if h != b.server {
		b.farPid = s.Pid()
		return s, nil
	}
	b.serverPid = s.Pid()
	certs, err := b.copyClientFiles(ctx, s.Conn().CertDir)
	if err != nil {
		return nil, err
	}
	return clientView{Server: s, certDir: certs}, nil
}

// serverOptions is how the server of sv starts on its host h: on the host's data
// address, and on 127.0.0.1 too when a load driver on the host reaches it over TCP
// (sv.Loopback), with sv's replication settings.
func (b *Backend) serverOptions(sv study.Server, h *host) ServerOptions {
	k := b.engine.Spec().Kind
	bind := h.inv.PeerAddress()
	if sv.Loopback {
		bind += ",127.0.0.1"
	}
	return ServerOptions{Engine: k, Agent: h.stage.Agent, Dir: path.Join(h.stage.Dir, string(k)),
		Bind: bind, BufferPool: sv.DB.BufferPool, ServerID: sv.DB.ServerID, LogBin: sv.DB.LogBin, Extra: sv.DB.Extra}
}

// clientCerts is where each client keeps its copy of the server's client files, relative
// to its wirelab directory: the launcher resolves it there, so one Conn serves every
// client although each one's directory has a name of its own.
const clientCerts = "certs"

// copyClientFiles copies the engine's client files from the server's certificate
// directory to a private one on every client and returns its path (clientCerts).
func (b *Backend) copyClientFiles(ctx context.Context, serverCerts string) (string, error) {
	k := b.engine.Spec().Kind
	for _, c := range b.clients {
		certs := path.Join(c.stage.Dir, clientCerts)
		if _, err := c.h.Run(ctx, "mkdir", "-p", "-m", "0700", certs); err != nil {
			return "", err
		}
		for _, f := range b.engine.Spec().ClientFiles {
			data, err := b.server.h.ReadFile(ctx, path.Join(serverCerts, f))
			if err != nil {
				return "", fmt.Errorf("copy %s's TLS client files to %s: %w", k.Title(), c.inv.Name, err)
			}
			if err := c.h.Copy(ctx, strings.NewReader(string(data)), path.Join(certs, f), 0o600); err != nil {
				return "", fmt.Errorf("copy %s's TLS client files to %s: %w", k.Title(), c.inv.Name, err)
			}
		}
	}
	return clientCerts, nil
}

// clientView is the remote server as a client host's sysbench reaches it: its TLS
// files are the client's copies (clientCerts, in the client's own directory).
type clientView struct {
	*Server
	certDir string
}

func (v clientView) Conn() engine.Conn {
	c := v.Server.Conn()
	c.CertDir = v.certDir
	return c
}

// track records a long-running process for Down.
func (b *Backend) track(p hosts.Proc) {
	b.mu.Lock()
	b.procs = append(b.procs, p)
	b.mu.Unlock()
}

// Down implements study.Backend: stops what it started (last first), removes each
// client's shaping and switch, removes the staged directories and closes the connections.
// It is idempotent and tries every step.
func (b *Backend) Down(ctx context.Context) error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	procs := b.procs
	b.procs = nil
	b.mu.Unlock()
	var errs []error
	for i := len(procs) - 1; i >= 0; i-- {
		c, cancel := context.WithTimeout(ctx, time.Minute)
		errs = append(errs, procs[i].Stop(c))
		cancel()
	}
	for _, l := range b.links {
		c, cancel := context.WithTimeout(ctx, time.Minute)
		errs = append(errs, l.Clear(c))
		cancel()
	}
	for _, h := range b.all() {
		if h.stage.Dir != "" {
			c, cancel := context.WithTimeout(ctx, time.Minute)
			errs = append(errs, hosts.Unstage(c, h.h, h.stage))
			cancel()
		}
		errs = append(errs, h.h.Close())
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("remove what wirelab made on the hosts (`wirelab down --hosts` finds what is left): %w", err)
	}
	return nil
}
