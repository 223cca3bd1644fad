package remote

import (
	"context"
	"fmt"
	"strings"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/result"
)

// clientArgv is the mariadb client on the server host, as root over the unix socket
// (unix_socket authentication), one batch of SQL, rows tab-separated without a header.
// --no-defaults first so no option file of the host is read; no TLS over the socket.
func clientArgv(socket, sql string) []string {
	return []string{"mariadb", "--no-defaults", "--protocol=socket", "--socket=" + socket, "--user=root",
		"--batch", "--raw", "--skip-column-names", "--connect-timeout=5", "--skip-ssl", "--execute=" + sql}
}

// Facts reads engine.MariaDBSettings with the mariadb client on the server host, so a
// remote server's report names the same settings as a lab server's.
func (m *MariaDB) Facts(ctx context.Context) (engine.Facts, error) {
	f := engine.Facts{Engine: string(engine.MariaDB), Version: m.st.Version}
	cols := make([]string, len(engine.MariaDBSettings))
	for i, name := range engine.MariaDBSettings {
		cols[i] = "@@" + name
	}
	out, err := m.h.Run(ctx, clientArgv(m.st.Socket, "SELECT "+strings.Join(cols, ", "))...)
	if err != nil {
		return f, fmt.Errorf("host %s: read mariadb's settings: %w", m.h.Name(), err)
	}
	vals := strings.Split(strings.TrimRight(string(out), "\r\n"), "\t")
	if len(vals) != len(engine.MariaDBSettings) {
		return f, fmt.Errorf("host %s: read mariadb's settings: want %d tab-separated values, got %q",
			m.h.Name(), len(engine.MariaDBSettings), out)
	}
	for i, name := range engine.MariaDBSettings {
		f.Settings = append(f.Settings, result.Setting{Name: name, Value: vals[i]})
	}
	return f, nil
}
