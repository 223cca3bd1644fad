package galera

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/wirelab/wirelab/internal/dbserver"
	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/execx"
	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/mariadb"
)

// SyncTimeout bounds the wait for the joiner's state transfer and for both nodes to
// report Synced.
const SyncTimeout = 3 * time.Minute

// Cluster is a running two-node galera cluster in a lab.
type Cluster struct {
	// Primary is the node in lab.Server (clients write to it); Replica the node in
	// lab.Replica, across the wire. Both are lab servers: engine.Server for samplers
	// and Conn, the *mariadb.Server inside for SQL.
	Primary, Replica *engine.MariaDBServer
	Options          Options

	lab       *lab.Lab
	log       *slog.Logger
	seeded    string // the replica's directory once Start copied a datadir into it
	closeOnce sync.Once
	closeErr  error
}

// Start bootstraps a new cluster on the lab's server host and adds a node on its replica
// host, across the wire; it returns once both are Synced members of a two-node primary
// component and share the bench user's password. The lab must have a server and a replica
// host, and its wire's RTT must be within o.MaxRTT. On any error, and when ctx ends, Start
// stops what it started and removes the datadirs.
//
// The replica is not filled by a state transfer (SST) across the wire: rsync took 35 s
// for a fresh datadir at 20 ms RTT, longer than the server's start timeout at higher
// RTTs. Instead the first node, once bootstrapped, is stopped cleanly, its datadir copied
// for the replica (without the node's own view state and write-set cache) and it is
// bootstrapped again from that state; the replica then joins with the same state and
// needs only the few write sets the restart made (an incremental transfer, IST).
func Start(ctx context.Context, l *lab.Lab, o Options) (*Cluster, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	for _, h := range []string{lab.Server, lab.Replica} {
		if l.State.NS(h) == "" {
			return nil, fmt.Errorf("start galera: the lab has no %s host (build it with the server and replica hosts)", h)
		}
	}
	if err := o.CheckRTT(l.State.Condition.RTT() + 2*l.State.Condition.Jitter); err != nil {
		return nil, fmt.Errorf("start galera: %w", err)
	}
	provider, err := findProvider(o.Provider)
	if err != nil {
		return nil, fmt.Errorf("start galera: %w", err)
	}
	c := &Cluster{Options: o, lab: l, log: l.Logger().With("component", "galera")}
	name := "wirelab-" + l.State.RunID
	primary := node{Name: lab.Server, Addr: lab.HostAddr[lab.Server]}
	replica := node{Name: lab.Replica, Addr: lab.HostAddr[lab.Replica], Join: primary.Addr}

	fail := func(err error) (*Cluster, error) {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
		defer cancel()
		return nil, errors.Join(err, c.Close(cctx))
	}
	t0 := time.Now()
	if c.Primary, err = c.startNode(ctx, primary, o, provider, name); err != nil {
		return fail(err)
	}
	if err := c.Primary.Stop(ctx); err != nil {
		return fail(fmt.Errorf("stop the first node to copy it: %w", err))
	}
	c.seeded = l.ServerDir(engine.MariaDB, lab.Replica)
	if err := seedDatadir(ctx, l.Runner(), c.Primary.DataDir, dbserver.DirsIn(c.seeded).DataDir); err != nil {
		return fail(err)
	}
	if c.Primary, err = c.startNode(ctx, primary, o, provider, name); err != nil {
		return fail(err)
	}
	c.log.Info("galera: bootstrapped and copied", "node", primary.Name, "took", time.Since(t0).Round(time.Millisecond))
	t1 := time.Now()
	if c.Replica, err = c.startNode(ctx, replica, o, provider, name); err != nil {
		return fail(err)
	}
	if err := c.waitSynced(ctx, SyncTimeout); err != nil {
		return fail(err)
	}
	c.log.Info("galera: joined", "node", replica.Name, "took", time.Since(t1).Round(time.Millisecond))
	if err := c.samePassword(ctx); err != nil {
		return fail(err)
	}
	return c, nil
}

// nodeOwnFiles are the files of a galera datadir that belong to the node, not to the
// data: its last view of the cluster (with its own node id) and its write-set cache.
var nodeOwnFiles = []string{"gvwstate.dat", "galera.cache"}

// seedDatadir copies a stopped node's datadir to dst (which must not exist yet) without
// the node's own files, so a second node starts with the same state (grastate.dat).
func seedDatadir(ctx context.Context, r execx.Runner, src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("copy datadir for the replica: %w", err)
	}
	if _, err := os.Stat(dst); err == nil {
		return fmt.Errorf("copy datadir for the replica: %s already exists", dst)
	}
	if _, err := r.Run(ctx, "cp", "-a", "--sparse=always", src, dst); err != nil {
		return fmt.Errorf("copy datadir for the replica: %w", err)
	}
	for _, f := range nodeOwnFiles {
		if err := os.Remove(filepath.Join(dst, f)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("copy datadir for the replica: %w", err)
		}
	}
	return nil
}

func (c *Cluster) startNode(ctx context.Context, n node, o Options, provider, cluster string) (*engine.MariaDBServer, error) {
	srv, err := c.lab.StartServer(ctx, n.Name, lab.DBOptions{Engine: engine.MariaDB, BufferPool: o.BufferPool,
		Extra: serverSettings(n, o, provider, cluster)})
	if err != nil {
		return nil, fmt.Errorf("start galera node in %s: %w", n.Name, err)
	}
	m, ok := srv.(*engine.MariaDBServer)
	if !ok { // StartServer returned another engine: stop it, it is not ours to keep
		_ = c.lab.StopServer(context.WithoutCancel(ctx), n.Name, srv)
		return nil, fmt.Errorf("start galera node in %s: got a %s server", n.Name, srv.Kind())
	}
	return m, nil
}

// nodes are the started nodes, primary first.
func (c *Cluster) nodes() []*engine.MariaDBServer {
	var ns []*engine.MariaDBServer
	for _, n := range []*engine.MariaDBServer{c.Primary, c.Replica} {
		if n != nil {
			ns = append(ns, n)
		}
	}
	return ns
}

// waitSynced polls both nodes until each is Synced in a two-node primary component.
func (c *Cluster) waitSynced(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last Stats
	var lastErr error
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		last, lastErr = c.Stats(ctx)
		if lastErr == nil && last.Primary.synced(2) && last.Replica.synced(2) {
			return nil
		}
		select {
		case <-ctx.Done():
			if lastErr != nil {
				return fmt.Errorf("wait for galera sync: %w", lastErr)
			}
			return fmt.Errorf("wait for galera sync: not synced after %s (server: size %d, %s, %s; replica: size %d, %s, %s)",
				timeout, last.Primary.ClusterSize, last.Primary.ClusterStatus, last.Primary.State,
				last.Replica.ClusterSize, last.Replica.ClusterStatus, last.Replica.State)
		case <-tick.C:
		}
	}
}

// samePassword gives the bench user the primary's password on both nodes. Each node's
// start set a password of its own, and whether the joiner's change replicated depends on
// how galera treats the statement; an ALTER USER on the primary replicates, so after it
// both nodes take the primary's password, and the Replica's Conn says so.
func (c *Cluster) samePassword(ctx context.Context) error {
	p, r := c.Primary.Server, c.Replica.Server
	var b strings.Builder
	for _, host := range []string{"%", "localhost"} {
		fmt.Fprintf(&b, "ALTER USER %s@%s IDENTIFIED BY %s;\n", sqlString(p.User), sqlString(host), sqlString(p.Password))
	}
	if _, err := p.Exec(ctx, b.String()); err != nil {
		return fmt.Errorf("galera bench user: %w", err)
	}
	r.Password = p.Password
	return nil
}

// sqlString quotes a string literal for the mariadb client.
func sqlString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\x00", `\0`, "\n", `\n`, "\r", `\r`)
	return "'" + r.Replace(s) + "'"
}

// Stats reads both nodes' wsrep status.
func (c *Cluster) Stats(ctx context.Context) (Stats, error) {
	s := Stats{At: time.Now()}
	for _, n := range []struct {
		srv *engine.MariaDBServer
		dst *NodeStats
	}{{c.Primary, &s.Primary}, {c.Replica, &s.Replica}} {
		if n.srv == nil {
			return s, errors.New("galera stats: the cluster is not running")
		}
		st, err := nodeStats(ctx, n.srv.Server)
		if err != nil {
			return s, err
		}
		*n.dst = st
	}
	return s, nil
}

// statusQuery reads a node's wsrep status variables.
const statusQuery = `SHOW GLOBAL STATUS LIKE 'wsrep\_%'`

func nodeStats(ctx context.Context, s *mariadb.Server) (NodeStats, error) {
	out, err := s.Exec(ctx, statusQuery)
	if err != nil {
		return NodeStats{}, fmt.Errorf("galera status in %s: %w", s.NS, err)
	}
	st, err := parseStatus(out)
	if err != nil {
		return st, fmt.Errorf("galera status in %s: %w", s.NS, err)
	}
	return st, nil
}

// Begin starts a measurement window: FLUSH STATUS on both nodes, so the servers'
// averages (send and receive queue) cover the window only, then a reading to pass to
// Stats.Since at the window's end.
func (c *Cluster) Begin(ctx context.Context) (Stats, error) {
	for _, n := range c.nodes() {
		if _, err := n.Exec(ctx, "FLUSH STATUS"); err != nil {
			return Stats{}, fmt.Errorf("galera window: %w", err)
		}
	}
	return c.Stats(ctx)
}

// CheckRTT refuses an RTT above the one the cluster's timeouts were set for; call it
// before shaping the wire for a point.
func (c *Cluster) CheckRTT(rtt time.Duration) error { return c.Options.CheckRTT(rtt) }

// Close stops the replica node, then the primary (each a clean shutdown: the node leaves
// the group), and removes their datadirs and lab records. It is idempotent and safe on
// a half-started cluster; later calls return the first call's result.
func (c *Cluster) Close(ctx context.Context) error {
	c.closeOnce.Do(func() {
		var errs []error
		if c.Replica != nil {
			errs = append(errs, c.lab.StopServer(ctx, lab.Replica, c.Replica))
		} else if c.seeded != "" { // copied, never started
			errs = append(errs, os.RemoveAll(c.seeded))
		}
		if c.Primary != nil {
			errs = append(errs, c.lab.StopServer(ctx, lab.Server, c.Primary))
		}
		if c.closeErr = errors.Join(errs...); c.closeErr != nil {
			c.closeErr = fmt.Errorf("close galera cluster: %w", c.closeErr)
		}
	})
	return c.closeErr
}
