package remote

import (
	"context"
	"fmt"
	"net"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/hosts"
	"github.com/wirelab/wirelab/internal/mariadb"
)

// DialSocket opens a connection to the server's unix socket on its own host, through the
// SSH connection (hosts.Dialer): wirelab's SQL to a remote server (replication's CHANGE
// MASTER, heartbeat, lag reads and checksums) never crosses the shaped link. The socket is
// opened as the inventory's login user. A dry run's host opens none (hosts.ErrNoDial).
func (m *Server) DialSocket(ctx context.Context) (net.Conn, error) {
	d, ok := m.h.(hosts.Dialer)
	if !ok {
		return nil, fmt.Errorf("host %s: %w", m.h.Name(), hosts.ErrNoDial)
	}
	return d.DialContext(ctx, "unix", m.st.Socket)
}

// MariaDB is the server as package mariadb administers it: its mariadb client runs on
// the server's host as root over the socket (hosts.Runner), so replication's calls work
// on it as on a lab server.
func (m *Server) MariaDB() (*mariadb.Server, error) {
	if m.o.Engine != engine.MariaDB {
		return nil, fmt.Errorf("host %s: the server is %s, not MariaDB", m.h.Name(), m.o.Engine.Title())
	}
	st := m.st
	return mariadb.Attach(&mariadb.Server{Dir: m.o.Dir, Socket: st.Socket, Host: st.Host, Port: st.Port,
		User: st.User, Password: st.Password, DB: st.DB, CertDir: st.CertDir, Pid: st.Pid, Version: st.Version},
		hosts.Runner(m.h)), nil
}
