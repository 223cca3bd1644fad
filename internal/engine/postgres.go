package engine

import (
	"context"
	"strconv"

	"github.com/wirelab/wirelab/internal/postgres"
	"github.com/wirelab/wirelab/internal/result"
)

// PostgresServer is a PostgreSQL the lab started.
type PostgresServer struct{ *postgres.Server }

// FromPostgres wraps a started PostgreSQL.
func FromPostgres(s *postgres.Server) *PostgresServer { return &PostgresServer{s} }

// Kind is PostgreSQL.
func (s *PostgresServer) Kind() Kind { return Postgres }

// Conn is the bench role's TCP address, socket directory and certificates.
func (s *PostgresServer) Conn() Conn {
	return Conn{Engine: Postgres, Host: s.Host, Port: s.Port, Socket: s.SocketDir, User: s.User,
		Password: s.Password, DB: s.DB, CertDir: s.CertDir}
}

// Pid is the postmaster's.
func (s *PostgresServer) Pid() int { return s.Server.Pid }

// Pids is the postmaster and its children: a backend per connection, the WAL writer,
// the WAL sender of a replica.
func (s *PostgresServer) Pids() []int { return s.Server.Pids() }

// Facts reads the version and the wire's settings.
func (s *PostgresServer) Facts(ctx context.Context) (Facts, error) {
	f := Facts{Engine: string(Postgres), Version: s.Server.Version}
	st, err := s.Settings(ctx)
	if err != nil {
		return f, err
	}
	for _, kv := range [][2]string{{"ssl", onOff(st.SSL)}, {"max_connections", strconv.Itoa(st.MaxConnections)},
		{"synchronous_commit", st.SynchronousCommit}, {"wal_compression", st.WALCompression},
		{"wal_level", st.WALLevel}, {"shared_buffers", st.SharedBuffers},
		{"max_wal_senders", strconv.Itoa(st.MaxWALSenders)}, {"wal_writer_delay", st.WALWriterDelay},
		{"wal_receiver_timeout", st.WALReceiverTimeout}, {"full_page_writes", onOff(st.FullPageWrites)},
		{"checkpoint_timeout", st.CheckpointTimeout}, {"max_wal_size", st.MaxWALSize}} {
		f.Settings = append(f.Settings, result.Setting{Name: kv[0], Value: kv[1]})
	}
	return f, nil
}

// Version is the server's version string.
func (s *PostgresServer) Version() string { return s.Server.Version }

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}
