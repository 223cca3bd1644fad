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
	// The last: a server rebuilt from a stale state file whose pid is now the test's.
	for _, s := range []*Server{nil, {}, {Pid: os.Getpid()}} {
		if err := s.Stop(context.Background()); err != nil || (s != nil && s.Pid > 0 && s.alive()) {
			t.Errorf("Stop(%+v) = %v; a foreign pid must not pass for a mariadbd", s, err)
		}
	}
}
