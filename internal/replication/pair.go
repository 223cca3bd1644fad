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

	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/mariadb"
)

// Pair is a source in the server host and its replica in the replica host, with SQL
// handles over their sockets and the channel the replica currently uses.
type Pair struct {
	Lab              *lab.Lab
	Source, Replica  *mariadb.Server
	SrcDB, RepDB     *sql.DB
	Tables           []string
	Self             string            // wirelab binary, for the tunnel ends
	Tunnel           lab.TunnelOptions // the tunnel channel's knobs
	Log              *slog.Logger
	replUser, replPw string
	current          Channel
	tunnelUp         bool
}

// ErrMismatch means the replica's data differs from the source's.
var ErrMismatch = errors.New("checksum mismatch between source and replica")

// Start points the replica at the source over the native channel from the start of the
// source's binlog (GTID, empty slave position), so the replica replays everything the
// source has written — the sysbench prepare included — rather than building its own copy.
// It waits for the replica to catch up and checks that every table matches.
func (p *Pair) Start(ctx context.Context, timeout time.Duration) error {
	var err error
	if p.replUser, p.replPw, err = p.Source.CreateReplUser(ctx); err != nil {
		return err
	}
	// RESET SLAVE ALL clears any leftover configuration; gtid_slave_pos '' = start of binlog.
	if _, err := p.Replica.Exec(ctx, "STOP SLAVE; RESET SLAVE ALL; SET GLOBAL gtid_slave_pos='';"); err != nil {
		return fmt.Errorf("reset replica: %w", err)
	}
	if err := p.Use(ctx, Native); err != nil {
		return err
	}
	if _, err := p.CatchUp(ctx, timeout); err != nil {
		return fmt.Errorf("initial copy: %w", err)
	}
	if err := p.Verify(ctx); err != nil {
		return fmt.Errorf("initial copy: %w", err)
	}
	return nil
}

// endpoint is where the replica's IO thread connects for a channel.
func endpoint(ch Channel) (host string, port int, compressed bool) {
	switch ch {
	case NativeCompressed:
		return lab.HostAddr[lab.Server], 3306, true
	case Tunnel:
		return "127.0.0.1", lab.TunnelEntryPort, false
	default:
		return lab.HostAddr[lab.Server], 3306, false
	}
}

// Use switches the replica to channel ch: STOP SLAVE, CHANGE MASTER, START SLAVE, and
// waits until the IO thread is connected. With MASTER_USE_GTID=slave_pos the new
// connection resumes from the last applied transaction, so nothing is skipped or applied
// twice whatever was in flight.
func (p *Pair) Use(ctx context.Context, ch Channel) error {
	if ch == Tunnel {
		if err := p.startTunnel(ctx); err != nil {
			return err
		}
	}
	host, port, compressed := endpoint(ch)
	if err := p.Replica.StopSlave(ctx); err != nil {
		return fmt.Errorf("use channel %s: %w", ch, err)
	}
	if err := p.Replica.ChangeMaster(ctx, host, port, p.replUser, p.replPw, compressed); err != nil {
		return fmt.Errorf("use channel %s: %w", ch, err)
	}
	if err := p.Replica.StartSlave(ctx); err != nil {
		return fmt.Errorf("use channel %s: %w", ch, err)
	}
	if err := p.waitIO(ctx, 30*time.Second); err != nil {
		return fmt.Errorf("use channel %s: %w", ch, err)
	}
	p.current = ch
	p.Log.Info("replica channel", "channel", string(ch), "master", net.JoinHostPort(host, strconv.Itoa(port)), "compressed", compressed)
	return nil
}

// Current is the channel in use.
func (p *Pair) Current() Channel { return p.current }

// waitIO waits for Slave_IO_Running=Yes and Slave_SQL_Running=Yes.
func (p *Pair) waitIO(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var st map[string]string
	var err error
	for {
		st, err = p.Replica.SlaveStatus(ctx)
		if err == nil && st["Slave_IO_Running"] == "Yes" && st["Slave_SQL_Running"] == "Yes" {
			return nil
		}
		if err == nil && st["Slave_SQL_Running"] == "No" && st["Last_SQL_Error"] != "" {
			return fmt.Errorf("replica SQL thread stopped: %s", st["Last_SQL_Error"])
		}
		if time.Now().After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	if err != nil {
		return err
	}
	return fmt.Errorf("replica IO thread not connected after %s (IO %s, last IO error: %s)",
		timeout, st["Slave_IO_Running"], orNone(st["Last_IO_Error"]))
}

// CatchUp waits until the replica has applied everything the source has written so far
// and returns how long that took.
func (p *Pair) CatchUp(ctx context.Context, timeout time.Duration) (time.Duration, error) {
	start := time.Now()
	pos, err := p.Source.GTIDPos(ctx)
	if err != nil {
		return 0, err
	}
	if err := p.Replica.WaitGTID(ctx, pos, timeout); err != nil {
		if st, serr := p.Replica.SlaveStatus(ctx); serr == nil {
			err = fmt.Errorf("%w (IO %s, SQL %s, last IO error: %s, last SQL error: %s)", err,
				st["Slave_IO_Running"], st["Slave_SQL_Running"], orNone(st["Last_IO_Error"]), orNone(st["Last_SQL_Error"]))
		}
		return time.Since(start), err
	}
	return time.Since(start), nil
}

// Verify compares CHECKSUM TABLE of every sysbench table on both servers. Call it after
// CatchUp with no load running.
func (p *Pair) Verify(ctx context.Context) error {
	src, err := Checksums(ctx, p.SrcDB, p.Tables)
	if err != nil {
		return fmt.Errorf("source: %w", err)
	}
	rep, err := Checksums(ctx, p.RepDB, p.Tables)
	if err != nil {
		return fmt.Errorf("replica: %w", err)
	}
	if d := CompareChecksums(p.Tables, src, rep); d != "" {
		return fmt.Errorf("%w: %s", ErrMismatch, d)
	}
	return nil
}

// startTunnel starts the exit in the server host and the entry in the replica host once;
// they stay up for the rest of the run and lab.Down stops them.
func (p *Pair) startTunnel(ctx context.Context) error {
	if p.tunnelUp {
		return nil
	}
	if p.Self == "" {
		return errors.New("tunnel channel: no wirelab binary to start the tunnel ends with")
	}
	if _, err := p.Lab.StartTunnel(ctx, p.Self, lab.Replica, p.Tunnel); err != nil {
		return fmt.Errorf("tunnel channel: %w", err)
	}
	p.tunnelUp = true
	return nil
}

// Close closes the SQL handles.
func (p *Pair) Close() {
	if p.SrcDB != nil {
		_ = p.SrcDB.Close()
	}
	if p.RepDB != nil {
		_ = p.RepDB.Close()
	}
}
