package mariadb

import (
	"context"
	"os"
	"path/filepath"
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

func TestCheckTraversable(t *testing.T) {
	base := worldSearchableDir(t)
	closed := filepath.Join(base, "closed")
	open := filepath.Join(base, "open")
	for d, mode := range map[string]os.FileMode{closed: 0o700, open: 0o755} {
		if err := os.MkdirAll(filepath.Join(d, "srv"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := checkTraversable(filepath.Join(closed, "srv")); err == nil || !strings.Contains(err.Error(), closed) {
		t.Errorf("0700 parent: err = %v, want it to name %s", err, closed)
	}
	if err := checkTraversable(filepath.Join(open, "srv")); err != nil {
		t.Errorf("0755 parents: %v", err)
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

func TestTailFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "error.log")
	if err := os.WriteFile(p, []byte("a\nb\nc\nd\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := tailFile(p, 2); got != "c\nd" {
		t.Errorf("tail = %q", got)
	}
	if got := tailFile(p+".missing", 2); !strings.Contains(got, "cannot read") {
		t.Errorf("missing file: %q", got)
	}
}

// worldSearchableDir is a temp dir user mysql can reach: t.TempDir() lives under a 0700
// directory. It is removed when the test ends.
func worldSearchableDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "wlmdb")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(d) })
	if err := os.Chmod(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}
