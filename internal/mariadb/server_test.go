package mariadb

import (
	"context"
	"os"
	"strings"
	"testing"
)

func TestSpawnArgv(t *testing.T) {
	l := newLayout("/lab/srv")
	name, args := spawnArgv("wl-abc-server", "/usr/sbin/mariadbd", l)
	got := name + " " + strings.Join(args, " ")
	want := "ip netns exec wl-abc-server /usr/sbin/mariadbd --defaults-file=/lab/srv/my.cnf --user=mysql"
	if got != want {
		t.Errorf("in a namespace:\n got %s\nwant %s", got, want)
	}
	name, args = spawnArgv("", "/usr/sbin/mariadbd", l)
	if got := name + " " + strings.Join(args, " "); got != "/usr/sbin/mariadbd --defaults-file=/lab/srv/my.cnf --user=mysql" {
		t.Errorf("on the host: %s", got)
	}
}

func TestInstallArgs(t *testing.T) {
	a := installArgs(newLayout("/lab/srv"))
	if a[0] != "--no-defaults" {
		t.Errorf("--no-defaults must come first: %q", a)
	}
	for _, w := range []string{"--datadir=/lab/srv/data", "--user=mysql", "--skip-test-db",
		"--auth-root-authentication-method=socket", "--tmpdir=/lab/srv/tmp"} {
		if !strings.Contains(strings.Join(a, " "), w) {
			t.Errorf("install args lack %s: %q", w, a)
		}
	}
}

func TestStopIsSafeOnNilAndForeignPids(t *testing.T) {
	ctx := context.Background()
	var nilServer *Server
	if err := nilServer.Stop(ctx); err != nil {
		t.Errorf("nil server: %v", err)
	}
	if err := (&Server{}).Stop(ctx); err != nil {
		t.Errorf("server without pid: %v", err)
	}
	// A server rebuilt from a stale state file whose pid now belongs to someone else (here:
	// the test itself) must not be signalled.
	s := &Server{Pid: os.Getpid()}
	if s.alive() {
		t.Fatal("the test binary was taken for a mariadbd")
	}
	if err := s.Stop(ctx); err != nil {
		t.Errorf("foreign pid: %v", err)
	}
}
