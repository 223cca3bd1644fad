package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/wirelab/wirelab/internal/dbserver"
)

// ReplUser is the role CreateReplUser makes on a primary.
const ReplUser = "repl"

// Upstream is the primary a replica streams from, as the replica reaches it: the
// primary's own address, or a tunnel's entry in front of it.
type Upstream struct {
	Host     string
	Port     int
	User     string // a role with REPLICATION (CreateReplUser)
	Password string
	SSLMode  SSLMode // "" = disable
	// BenchPassword is the bench role's password on the primary; the replica has the same
	// role (it is a copy) and reports it as its Server.Password.
	BenchPassword string
	// Slot is a physical replication slot the base backup creates on the primary and the
	// standby then streams through ("" = none). The slot keeps every WAL segment the
	// standby has not received, so a standby far behind (a slow wire, a dropped link) still
	// catches up instead of finding its next segment recycled.
	Slot string
}

// StandbyName is the application_name a standby connects with: what the primary's
// pg_stat_replication and synchronous_standby_names call it.
const StandbyName = "wirelab-replica"

// conninfo is the libpq connection string the base backup uses and, through -R, the
// standby's primary_conninfo.
func (u Upstream) conninfo() string {
	mode := u.SSLMode
	if mode == "" {
		mode = SSLDisable
	}
	kv := func(k, v string) string { return k + "='" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(v) + "'" }
	return strings.Join([]string{kv("host", u.Host), kv("port", strconv.Itoa(u.Port)), kv("user", u.User),
		kv("password", u.Password), kv("sslmode", string(mode)), kv("application_name", StandbyName)}, " ")
}

// baseBackupArgs copies the primary's datadir with the WAL streamed alongside (-X
// stream), writes standby.signal and primary_conninfo (-R), and starts with a fast
// checkpoint rather than waiting for the next one. With a slot, -R also writes
// primary_slot_name.
func baseBackupArgs(u Upstream, l layout) []string {
	args := []string{"--dbname=" + u.conninfo(), "--pgdata=" + l.DataDir, "--wal-method=stream",
		"--write-recovery-conf", "--checkpoint=fast", "--no-sync"}
	if u.Slot != "" {
		args = append(args, "--create-slot", "--slot="+u.Slot)
	}
	return args
}

// Follow points this standby at u: primary_conninfo (and primary_slot_name, when u has a
// slot) through ALTER SYSTEM, then a reload. Since PostgreSQL 13 a reload that changes
// primary_conninfo restarts the WAL receiver with the new value, and the receiver asks
// for the WAL from where this standby stands, so nothing is skipped or replayed twice.
// Follow returns once the reload is signalled; Receiver tells when the new connection
// streams.
func (s *Server) Follow(ctx context.Context, u Upstream) error {
	stmts := []string{"ALTER SYSTEM SET primary_conninfo = " + quote(u.conninfo())}
	if u.Slot != "" {
		stmts = append(stmts, "ALTER SYSTEM SET primary_slot_name = "+quote(u.Slot))
	}
	stmts = append(stmts, "SELECT pg_reload_conf()")
	if _, err := s.psql(ctx, superUser, false, stmts...); err != nil {
		return fmt.Errorf("follow %s:%d: %w", u.Host, u.Port, err)
	}
	return nil
}

// Receiver is a standby's WAL receiver as pg_stat_wal_receiver shows it.
type Receiver struct {
	Status string // "streaming" once connected and receiving; starting, waiting, ...
	Host   string // sender_host: the address it connected to
	Port   int    // sender_port
	// WrittenLSN is how far this connection has received the WAL (written_lsn; flushed_lsn
	// never moves back, so it cannot tell). A new connection starts at the beginning of
	// the WAL segment the standby is in (16 MB segments), so after a reconnect it trails
	// the replay position until the primary has re-sent the segment's start.
	WrittenLSN string
}

// Receiver reads this standby's WAL receiver; ok is false while there is none (between
// a restart of the receiver and its next connection attempt).
func (s *Server) Receiver(ctx context.Context) (r Receiver, ok bool, err error) {
	out, err := s.psql(ctx, superUser, false, "SELECT status, COALESCE(sender_host, ''), COALESCE(sender_port, 0), "+
		"COALESCE(written_lsn, '0/0') FROM pg_stat_wal_receiver")
	if err != nil {
		return Receiver{}, false, fmt.Errorf("read pg_stat_wal_receiver: %w", err)
	}
	r, ok = parseReceiver(out)
	return r, ok, nil
}

func parseReceiver(out string) (Receiver, bool) {
	f := strings.Split(strings.TrimRight(out, "\n"), "\t")
	if len(f) != 4 {
		return Receiver{}, false
	}
	port, _ := strconv.Atoi(f[2])
	return Receiver{Status: f[0], Host: f[1], Port: port, WrittenLSN: f[3]}, true
}

// ParseLSN turns a pg_lsn's text ("16/B374D848": high and low 32 bits in hex) into a
// byte position in the WAL, so that two positions subtract to the WAL written between
// them (what pg_wal_lsn_diff computes).
func ParseLSN(s string) (uint64, error) {
	hi, lo, ok := strings.Cut(strings.TrimSpace(s), "/")
	h, err1 := strconv.ParseUint(hi, 16, 32)
	l, err2 := strconv.ParseUint(lo, 16, 32)
	if !ok || err1 != nil || err2 != nil {
		return 0, fmt.Errorf("parse lsn %q: want two hex numbers like 0/3000148", s)
	}
	return h<<32 | l, nil
}

// CreateReplUser creates (or re-passwords) the replication role on a primary and returns
// its random password. pg_hba.conf already lets it in for replication.
func (s *Server) CreateReplUser(ctx context.Context) (user, password string, err error) {
	pw, err := dbserver.RandomPassword()
	if err != nil {
		return "", "", fmt.Errorf("create replication user: %w", err)
	}
	role := ident(ReplUser)
	if _, err := s.psql(ctx, superUser, false,
		fmt.Sprintf("DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = %s) THEN CREATE ROLE %s; END IF; END $$",
			quote(ReplUser), role),
		fmt.Sprintf("ALTER ROLE %s REPLICATION LOGIN PASSWORD %s", role, quote(pw))); err != nil {
		return "", "", fmt.Errorf("create replication user: %w", err)
	}
	return ReplUser, pw, nil
}

// WALPosition returns where the server is in the WAL: on a primary the end of the last
// record inserted, on a standby the end of the last one replayed (pg_lsn text, e.g.
// "0/3000148"). The primary's insert position, not its write position: with
// synchronous_commit=off a commit can sit in the WAL buffers, and a standby that reached
// the write position would not have it yet.
func (s *Server) WALPosition(ctx context.Context) (string, error) {
	out, err := s.psql(ctx, superUser, false,
		"SELECT CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() ELSE pg_current_wal_insert_lsn() END")
	if err != nil {
		return "", fmt.Errorf("read wal position: %w", err)
	}
	return strings.TrimSpace(out), nil
}

// ErrReplayTimeout means a standby did not replay up to a position in time.
var ErrReplayTimeout = errors.New("replica did not catch up")

// WaitReplay blocks until this standby has replayed the WAL up to lsn (from the
// primary's WALPosition), polling every 100 ms, or timeout passes.
func (s *Server) WaitReplay(ctx context.Context, lsn string, timeout time.Duration) error {
	return s.waitLSN(ctx, lsn, timeout, fmt.Sprintf("SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", quote(lsn)))
}

// WaitCaughtUp is WaitReplay that also waits for the WAL receiver's connection to have
// received up to lsn. The two differ after a reconnect: the new connection starts at the
// beginning of the current WAL segment, so the primary re-sends up to 16 MB the standby
// has already replayed, and a standby that is "caught up" by replay alone still has that
// transfer ahead of it on the wire.
func (s *Server) WaitCaughtUp(ctx context.Context, lsn string, timeout time.Duration) error {
	return s.waitLSN(ctx, lsn, timeout, fmt.Sprintf("SELECT pg_last_wal_replay_lsn() >= %[1]s::pg_lsn AND "+
		"COALESCE((SELECT written_lsn FROM pg_stat_wal_receiver), '0/0') >= %[1]s::pg_lsn", quote(lsn)))
}

// waitLSN polls query (true when the standby is far enough) every 100 ms.
func (s *Server) waitLSN(ctx context.Context, lsn string, timeout time.Duration, query string) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		out, err := s.psql(ctx, superUser, false, query)
		if err == nil && strings.TrimSpace(out) == "t" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for replay of %s: %w after %s (last error: %v)", lsn, ErrReplayTimeout, timeout, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Sender is one row of pg_stat_replication on a primary: a connected standby.
type Sender struct {
	Application string // application_name, "wirelab-replica"
	State       string // startup, catchup, streaming
	SentLSN     string
	ReplayLSN   string
	ReplayLagMs float64 // replay_lag; 0 when idle (PostgreSQL reports NULL)
}

// Senders lists the standbys streaming from this primary.
func (s *Server) Senders(ctx context.Context) ([]Sender, error) {
	out, err := s.psql(ctx, superUser, false, "SELECT application_name, state, sent_lsn, replay_lsn, "+
		"COALESCE(EXTRACT(epoch FROM replay_lag) * 1000, 0) FROM pg_stat_replication ORDER BY pid")
	if err != nil {
		return nil, fmt.Errorf("read pg_stat_replication: %w", err)
	}
	return parseSenders(out), nil
}

func parseSenders(out string) []Sender {
	var ss []Sender
	for _, ln := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		f := strings.Split(ln, "\t")
		if len(f) != 5 {
			continue
		}
		lag, _ := strconv.ParseFloat(f[4], 64)
		ss = append(ss, Sender{Application: f[0], State: f[1], SentLSN: f[2], ReplayLSN: f[3], ReplayLagMs: lag})
	}
	return ss
}
