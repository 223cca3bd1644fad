package remote

import (
	"context"
	"fmt"
	"strings"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/result"
)

// mariadbSettings are the variables that shape what goes over the wire: the ones
// engine.MariaDBServer reports for a lab server (a test keeps the two lists equal), so a
// remote server's report reads the same.
var mariadbSettings = []string{"have_ssl", "max_connections", "max_allowed_packet", "innodb_flush_log_at_trx_commit"}

// clientArgv is the mariadb client on the server host, as root over the unix socket
// (unix_socket authentication), one batch of SQL, rows tab-separated without a header.
// --no-defaults first so no option file of the host is read; no TLS over the socket.
func clientArgv(socket, sql string) []string {
	return []string{"mariadb", "--no-defaults", "--protocol=socket", "--socket=" + socket, "--user=root",
		"--batch", "--raw", "--skip-column-names", "--connect-timeout=5", "--skip-ssl", "--execute=" + sql}
}

// Facts reads the wire's settings with the mariadb client on the server host.
func (m *MariaDB) Facts(ctx context.Context) (engine.Facts, error) {
	f := engine.Facts{Engine: string(engine.MariaDB), Version: m.st.Version}
	cols := make([]string, len(mariadbSettings))
	for i, name := range mariadbSettings {
		cols[i] = "@@" + name
	}
	out, err := m.h.Run(ctx, clientArgv(m.st.Socket, "SELECT "+strings.Join(cols, ", "))...)
	if err != nil {
		return f, fmt.Errorf("host %s: read mariadb's settings: %w", m.h.Name(), err)
	}
	vals := strings.Split(strings.TrimRight(string(out), "\r\n"), "\t")
	if len(vals) != len(mariadbSettings) {
		return f, fmt.Errorf("host %s: read mariadb's settings: want %d tab-separated values, got %q",
			m.h.Name(), len(mariadbSettings), out)
	}
	for i, name := range mariadbSettings {
		f.Settings = append(f.Settings, result.Setting{Name: name, Value: vals[i]})
	}
	return f, nil
}
