package cli

import (
	"flag"
	"io"
	"testing"

	"github.com/wirelab/wirelab/internal/engine"
)

// The ssh-agent socket is read from the command's environment, once, and handed to the
// remote backend as an option: nothing below cli reads SSH_AUTH_SOCK.
func TestHostsOptionsCarryTheAgentSocketFromTheEnvironment(t *testing.T) {
	for _, sock := range []string{"/run/user/0/ssh-agent.sock", ""} {
		p, _, _, _ := testProcess(t, true)
		p.Getenv = func(k string) string {
			if k == "SSH_AUTH_SOCK" {
				return sock
			}
			return ""
		}
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		h := addHostsFlags(fs)
		if err := fs.Parse([]string{"--hosts", syncInventory(t, "")}); err != nil {
			t.Fatal(err)
		}
		o, err := h.load(p, engine.MariaDB)
		if err != nil {
			t.Fatal(err)
		}
		if o.AgentSocket != sock {
			t.Errorf("SSH_AUTH_SOCK=%q: options carry %q", sock, o.AgentSocket)
		}
	}
	if got := (&Process{}).env("SSH_AUTH_SOCK"); got != "" {
		t.Errorf("a process without an environment reads %q", got)
	}
}
