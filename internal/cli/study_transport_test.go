package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `study transport --hosts --dry-run` prints the whole plan, each path's sysbench on the
// host that runs it, and runs nothing on this machine.
func TestTransportHostsDryRunPrintsThePlan(t *testing.T) {
	dir := t.TempDir()
	inv := filepath.Join(dir, "hosts.yaml")
	if err := os.WriteFile(inv, []byte("known_hosts: /nonexistent/known_hosts\nhosts:\n"+
		"  - {name: app, role: client, address: 198.18.20.1, nic: eth1, user: root}\n"+
		"  - {name: db, role: server, address: 198.18.20.2, user: root, server: {start: mariadb}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p, out, errb, f := testProcess(t, true)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p.Self = self
	code := Main([]string{"study", "transport", "--hosts", inv, "--dry-run", "--threads", "1", "--duration", "3s",
		"--out", filepath.Join(dir, "out")}, p)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb)
	}
	text := out.String()
	for _, want := range []string{
		"db: stream: sysbench oltp_read_only --db-driver=mysql --mysql-socket=/tmp/wirelab-XXXXXX/mariadb/mysqld.sock",
		"db: stream: sysbench oltp_read_only --db-driver=mysql --mysql-host=127.0.0.1",
		"app: stream: sysbench oltp_read_only --db-driver=mysql --mysql-host=198.18.20.2",
		"app: stream: sysbench oltp_read_only --db-driver=mysql --mysql-socket=/tmp/wirelab-XXXXXX/remote-socket/server.sock",
		"db: start socat-server:", "app: start socat-client:",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("plan lacks %q:\n%s", want, text)
		}
	}
	if len(f.Calls) > 0 {
		t.Errorf("a dry run ran commands here: %v", f.Lines())
	}
}
