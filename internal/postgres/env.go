package postgres

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/wirelab/wirelab/internal/pki"
)

// SSLMode is libpq's sslmode: what a client asks of TLS.
type SSLMode string

// The modes the lab uses. libpq's own default, "prefer", would silently use TLS against
// this server (ssl is on), so clients always say which one they want.
const (
	SSLDisable    SSLMode = "disable"     // plain TCP: the baseline
	SSLRequire    SSLMode = "require"     // TLS, certificate not checked (what most deployments do)
	SSLVerifyFull SSLMode = "verify-full" // TLS, certificate checked against ca.pem and the host name
)

// Env is the libpq environment that lets psql, pgbench and sysbench's pgsql driver reach
// the bench database over TCP without flags (as `wirelab exec` sets it). An empty mode
// means SSLDisable. PGSSLROOTCERT is always set so verify-full works by changing only
// PGSSLMODE.
func (s *Server) Env(mode SSLMode) []string {
	return append([]string{"WIRELAB_ENGINE=postgres"}, LibpqEnv(s.Host, s.Port, s.User, s.Password, s.DB, s.CertDir, mode)...)
}

// LibpqEnv is libpq's environment for a client of host:port: PGHOST ... PGSSLMODE (an empty
// mode is SSLDisable: libpq's own default, "prefer", would silently use TLS), and
// PGSSLROOTCERT when certDir holds the lab's CA.
func LibpqEnv(host string, port int, user, password, db, certDir string, mode SSLMode) []string {
	if mode == "" {
		mode = SSLDisable
	}
	env := []string{"PGHOST=" + host, "PGPORT=" + strconv.Itoa(port), "PGUSER=" + user,
		"PGPASSWORD=" + password, "PGDATABASE=" + db, "PGSSLMODE=" + string(mode)}
	if certDir != "" {
		env = append(env, "PGSSLROOTCERT="+filepath.Join(certDir, pki.CAFile))
	}
	return env
}

// Settings are the server settings that shape what goes over the wire, for the report.
type Settings struct {
	Version           string `json:"version"`            // server_version
	SSL               bool   `json:"ssl"`                // ssl: the server accepts TLS
	MaxConnections    int    `json:"max_connections"`    // max_connections
	SynchronousCommit string `json:"synchronous_commit"` // on, off, remote_apply, ...
	WALCompression    string `json:"wal_compression"`    // off, pglz, lz4, zstd: shrinks replication traffic
	WALLevel          string `json:"wal_level"`          // replica or logical
	SharedBuffers     string `json:"shared_buffers"`     // e.g. "1GB"
	// The replication settings: how many standbys may stream, how often an asynchronous
	// commit's WAL is flushed (and so becomes sendable to a standby), and how long a
	// standby waits on a silent primary before it reconnects.
	MaxWALSenders      int    `json:"max_wal_senders"`
	WALWriterDelay     string `json:"wal_writer_delay"`     // e.g. "200ms"
	WALReceiverTimeout string `json:"wal_receiver_timeout"` // e.g. "1min"
	// The first change of a page after a checkpoint writes the whole 8 kB page into the
	// WAL (full_page_writes), so how often checkpoints come (checkpoint_timeout, or
	// max_wal_size of WAL) sets how much of the replication stream is page images.
	FullPageWrites    bool   `json:"full_page_writes"`
	CheckpointTimeout string `json:"checkpoint_timeout"` // e.g. "5min"
	MaxWALSize        string `json:"max_wal_size"`       // e.g. "1GB"
}

// settingsQuery reads Settings in one row, in the field order of Settings.
const settingsQuery = "SELECT current_setting('server_version'), current_setting('ssl'), " +
	"current_setting('max_connections'), current_setting('synchronous_commit'), " +
	"current_setting('wal_compression'), current_setting('wal_level'), current_setting('shared_buffers'), " +
	"current_setting('max_wal_senders'), current_setting('wal_writer_delay'), current_setting('wal_receiver_timeout'), " +
	"current_setting('full_page_writes'), current_setting('checkpoint_timeout'), current_setting('max_wal_size')"

// Settings reads the settings that matter for the wire from the running server.
func (s *Server) Settings(ctx context.Context) (Settings, error) {
	out, err := s.psql(ctx, superUser, false, settingsQuery)
	if err != nil {
		return Settings{}, fmt.Errorf("read settings: %w", err)
	}
	return parseSettings(out)
}

func parseSettings(out string) (Settings, error) {
	f := strings.Split(strings.TrimRight(out, "\n"), "\t")
	if len(f) != 13 {
		return Settings{}, fmt.Errorf("read settings: want 13 columns, got %q", out)
	}
	n, err := strconv.Atoi(f[2])
	if err != nil {
		return Settings{}, fmt.Errorf("read settings: max_connections %q: %w", f[2], err)
	}
	senders, err := strconv.Atoi(f[7])
	if err != nil {
		return Settings{}, fmt.Errorf("read settings: max_wal_senders %q: %w", f[7], err)
	}
	return Settings{Version: f[0], SSL: f[1] == "on", MaxConnections: n, SynchronousCommit: f[3],
		WALCompression: f[4], WALLevel: f[5], SharedBuffers: f[6], MaxWALSenders: senders,
		WALWriterDelay: f[8], WALReceiverTimeout: f[9], FullPageWrites: f[10] == "on", CheckpointTimeout: f[11], MaxWALSize: f[12]}, nil
}
