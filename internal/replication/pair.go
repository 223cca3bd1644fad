package replication

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"time"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/study"
)

// Replicator is one engine's way of replicating the Pair's source to its replica; one
// file per engine (mariadb.go, postgres.go), registered in engines.go. The Study calls
// Start once, after the data set is prepared on the source; then Use, CatchUp, Verify
// and LogBytes any number of times; Pair.Close releases what they opened.
type Replicator interface {
	// Start makes the replica a copy of the source that follows it over the native
	// channel, waits for the copy to catch up and checks that every table matches.
	Start(ctx context.Context, timeout time.Duration) error
	// Use switches the replica to channel ch and waits until it streams over it, without
	// skipping or applying anything twice.
	Use(ctx context.Context, ch Channel) error
	// CatchUp waits until the replica has applied everything the source has written so
	// far and returns how long that took.
	CatchUp(ctx context.Context, timeout time.Duration) (time.Duration, error)
	// Verify compares every table of the Pair on both servers (ErrMismatch when they
	// differ). Call it after CatchUp with no load running.
	Verify(ctx context.Context) error
	// LogBytes is how far the source's replication log has grown, in bytes: the binlog
	// files' size, the WAL insert position. Only differences mean something.
	LogBytes(ctx context.Context) (int64, error)
}

// Pair is a source in the server host and its replica in the replica host, with SQL
// handles over their sockets (as the bench user; on real hosts the sockets are reached
// through the SSH connections: that SQL never crosses the wire) and
// the channel the replica currently uses. It is what every engine shares; the engine's
// Replicator fills in Replica and RepDB once the replica exists.
type Pair struct {
	Backend         study.Backend // where the tunnel's ends start
	Source, Replica engine.Server
	SrcDB, RepDB    *sql.DB
	Tables          []Table
	Self            string            // wirelab binary, for the tunnel ends
	Tunnel          lab.TunnelOptions // the tunnel channel's knobs
	Log             *slog.Logger
	// Planned is a dry run's pair (hosts that print instead of running): no SQL handles,
	// the servers' admin commands printed by their hosts, nothing waited for or compared.
	Planned bool
	current Channel
	entry   string // the tunnel's entry as the replica's host reaches it, once started
}

// ErrMismatch means the replica's data differs from the source's.
var ErrMismatch = errors.New("checksum mismatch between source and replica")

// Current is the channel in use.
func (p *Pair) Current() Channel { return p.current }

// endpoint is where the replica connects for channel ch; it starts the tunnel on first
// use.
func (p *Pair) endpoint(ctx context.Context, ch Channel) (host string, port int, compressed bool, err error) {
	if ch == Tunnel {
		if err := p.startTunnel(ctx); err != nil {
			return "", 0, false, err
		}
	}
	c := p.Source.Conn()
	return channelAddr(ch, c.Host, c.Port, p.entry)
}

// channelAddr is where a channel reaches a source listening on srcHost:srcPort (its
// address across the wire): that address, or the tunnel's entry (host:port, as the
// replica's host reaches it). compressed is MariaDB's protocol compression, asked for by
// native-compressed.
func channelAddr(ch Channel, srcHost string, srcPort int, entry string) (host string, port int, compressed bool, err error) {
	switch ch {
	case Tunnel:
		h, ps, err := net.SplitHostPort(entry)
		if err != nil {
			return "", 0, false, fmt.Errorf("tunnel entry %q: %w", entry, err)
		}
		n, err := strconv.Atoi(ps)
		if err != nil {
			return "", 0, false, fmt.Errorf("tunnel entry %q: %w", entry, err)
		}
		return h, n, false, nil
	case NativeCompressed:
		return srcHost, srcPort, true, nil
	default:
		return srcHost, srcPort, false, nil
	}
}

// using records that the replica now replicates over ch.
func (p *Pair) using(ch Channel, host string, port int, compressed bool) {
	p.current = ch
	p.Log.Info("replica channel", "channel", string(ch), "source", net.JoinHostPort(host, strconv.Itoa(port)), "compressed", compressed)
}

// startTunnel starts the exit in the server host (forwarding to the source's port) and
// the entry in the replica host once; they stay up for the rest of the run and the backend's
// Down stops them.
func (p *Pair) startTunnel(ctx context.Context) error {
	if p.entry != "" {
		return nil
	}
	o := p.Tunnel
	o.ServerPort = p.Source.Conn().Port
	entry, err := p.Backend.StartTunnel(ctx, p.Self, lab.Replica, o)
	if err != nil {
		return fmt.Errorf("tunnel channel: %w", err)
	}
	p.entry = entry
	return nil
}

// Close closes the SQL handles; safe on a half-built Pair.
func (p *Pair) Close() {
	if p.SrcDB != nil {
		_ = p.SrcDB.Close()
	}
	if p.RepDB != nil {
		_ = p.RepDB.Close()
	}
}

// waitFor polls check every 200 ms until it says done, returns an error, or timeout
// passes (then the error is timedOut with check's last word).
func waitFor(ctx context.Context, timeout time.Duration, check func() (done bool, err error), timedOut func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		done, err := check()
		if err != nil || done {
			return err
		}
		if time.Now().After(deadline) {
			return timedOut()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
