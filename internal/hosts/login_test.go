package hosts

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/wirelab/wirelab/internal/execx"
)

func TestCheckLogin(t *testing.T) {
	ctx := context.Background()
	// root: nothing to ask.
	f := &execx.Fake{}
	if err := CheckLogin(ctx, "db1", "root", f); err != nil || len(f.Calls) != 0 {
		t.Errorf("root: %v, calls %v", err, f.Calls)
	}
	// A sudo user: sudo -n runs sh as root.
	f = &execx.Fake{Responses: map[string]string{"sh -c command -v sudo": "/usr/bin/sudo\n", "sudo -n sh -c id -u": "0\n"}}
	if err := CheckLogin(ctx, "db1", "alice", f); err != nil {
		t.Errorf("passwordless sudo: %v", err)
	}
	if got := f.Calls[len(f.Calls)-1].String(); got != "sudo -n sh -c id -u" {
		t.Errorf("the check ran %q, want the way every command runs (sudo -n sh -c)", got)
	}
	for _, c := range []struct {
		name string
		fake *execx.Fake
		want []string
	}{
		{"sudo asks for a password", &execx.Fake{Errors: map[string]error{
			"sudo -n": errors.New("Process exited with status 1: sudo: a password is required")}},
			[]string{"host db1", "login user alice", "without a password", "a password is required", "NOPASSWD"}},
		{"no sudo", &execx.Fake{Errors: map[string]error{"sh -c command -v sudo": errors.New("Process exited with status 127")}},
			[]string{"host db1", "login user alice", "sudo is not installed"}},
		{"sudo to another user", &execx.Fake{Responses: map[string]string{"sudo -n sh -c id -u": "1000\n"}},
			[]string{"login user alice", `uid "1000", not root`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := CheckLogin(ctx, "db1", "alice", c.fake)
			if !errors.Is(err, ErrNoRoot) {
				t.Fatalf("err = %v, want ErrNoRoot", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestAsRootAndStreamLine(t *testing.T) {
	if got := AsRoot("tc qdisc show dev eth0", false); got != "tc qdisc show dev eth0" {
		t.Errorf("root: %q", got)
	}
	if got := AsRoot("umask 077 && cat > 'a b'", true); got != `sudo -n sh -c 'umask 077 && cat > '\''a b'\'''` {
		t.Errorf("sudo: %q", got)
	}
	if got := streamLine([]string{"/tmp/wirelab-x/wirelab", "agent", "sample"}, []string{"A=b c"}, true); got !=
		`exec sudo -n env 'A=b c' setsid -w sh -c 'echo $$; exec "$0" "$@"' /tmp/wirelab-x/wirelab agent sample` {
		t.Errorf("sudo stream: %q", got)
	}
	if got := streamLine([]string{"true"}, nil, false); got != `exec sh -c 'echo $$; exec "$0" "$@"' true` {
		t.Errorf("root stream: %q", got)
	}
}
