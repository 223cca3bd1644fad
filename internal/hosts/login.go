package hosts

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/wirelab/wirelab/internal/execx"
)

// ErrNoRoot is returned when the login user of a host is not root and cannot become root
// through `sudo -n`: wirelab could not shape the NIC or start the server there.
var ErrNoRoot = errors.New("login user cannot run commands as root")

// LoginHost is a Host that can also run commands as its login user, never through sudo.
type LoginHost interface {
	Host
	Login() execx.Runner
}

// NeedsSudo says whether wirelab logging in as user goes through `sudo -n` for every
// command: every user but root.
func NeedsSudo(user string) bool { return user != "root" }

// CheckLogin makes sure wirelab can run commands as root on host when it logs in as user,
// before anything is copied there: root can; any other user must run `sudo -n sh -c` as
// root without a password, which is how every one of wirelab's commands reaches the host
// (tc, ip, iptables, the agents, the database server). login runs commands as user
// itself. It changes nothing.
func CheckLogin(ctx context.Context, host, user string, login execx.Runner) error {
	if !NeedsSudo(user) {
		return nil
	}
	fix := fmt.Sprintf("wirelab runs tc, ip, iptables, its agents and the database server as root, each through `sudo -n`: "+
		"allow it without a password (a line `%s ALL=(root) NOPASSWD: ALL` in /etc/sudoers.d/wirelab) or log in as root (user: root in the inventory)", user)
	if _, err := login.Run(ctx, "sh", "-c", "command -v sudo"); err != nil {
		return fmt.Errorf("host %s: login user %s is not root and sudo is not installed: %w: %s", host, user, ErrNoRoot, fix)
	}
	out, err := login.Run(ctx, "sudo", "-n", "sh", "-c", "id -u")
	if err != nil {
		return fmt.Errorf("host %s: login user %s may not run commands as root without a password (sudo -n sh -c 'id -u': %v): %w: %s",
			host, user, err, ErrNoRoot, fix)
	}
	if uid := strings.TrimSpace(string(out)); uid != "0" {
		return fmt.Errorf("host %s: login user %s: sudo -n runs commands as uid %q, not root: %w: %s", host, user, uid, ErrNoRoot, fix)
	}
	return nil
}
