package engine

import (
	"context"

	"github.com/wirelab/wirelab/internal/mariadb"
	"github.com/wirelab/wirelab/internal/result"
)

// MariaDBServer is a MariaDB the lab started.
type MariaDBServer struct{ *mariadb.Server }

// FromMariaDB wraps a started MariaDB.
func FromMariaDB(s *mariadb.Server) *MariaDBServer { return &MariaDBServer{s} }

// Kind is MariaDB.
func (s *MariaDBServer) Kind() Kind { return MariaDB }

// Conn is the bench user's TCP address, socket and certificates.
func (s *MariaDBServer) Conn() Conn {
	return Conn{Engine: MariaDB, Host: s.Host, Port: s.Port, Socket: s.Socket, User: s.User,
		Password: s.Password, DB: s.DB, CertDir: s.CertDir}
}

// Pid is mariadbd's.
func (s *MariaDBServer) Pid() int { return s.Server.Pid }

// Pids is mariadbd alone: one process serves every connection.
func (s *MariaDBServer) Pids() []int { return []int{s.Server.Pid} }

// MariaDBSettings are the variables that shape what goes over the wire: what every
// MariaDB server's facts report, whoever reads them (the lab, an external server, a
// server on a real host).
var MariaDBSettings = []string{"have_ssl", "max_connections", "max_allowed_packet", "innodb_flush_log_at_trx_commit"}

// Facts reads the version and the wire's settings.
func (s *MariaDBServer) Facts(ctx context.Context) (Facts, error) {
	f := Facts{Engine: string(MariaDB), Version: s.Server.Version}
	for _, name := range MariaDBSettings {
		out, err := s.Exec(ctx, "SELECT @@"+name)
		if err != nil {
			return f, err
		}
		f.Settings = append(f.Settings, result.Setting{Name: name, Value: trimLine(out)})
	}
	return f, nil
}

// Version is the server's version string.
func (s *MariaDBServer) Version() string { return s.Server.Version }
