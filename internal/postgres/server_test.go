package postgres

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirelab/wirelab/internal/pki"
)

func TestSpawnArgv(t *testing.T) {
	l := newLayout("/lab/srv")
	name, args := spawnArgv("wl-abc-server", "postgres", "/usr/lib/postgresql/15/bin", l)
	got := name + " " + strings.Join(args, " ")
	want := "ip netns exec wl-abc-server setpriv --reuid=postgres --regid=postgres --init-groups -- " +
		"/usr/lib/postgresql/15/bin/postgres --config-file=/lab/srv/postgresql.conf"
	if got != want {
		t.Errorf("in a namespace:\n got %s\nwant %s", got, want)
	}
	name, args = spawnArgv("", "pg", "/opt/pg/bin", l)
	if got := name + " " + strings.Join(args, " "); got != "setpriv --reuid=pg --regid=pg --init-groups -- /opt/pg/bin/postgres --config-file=/lab/srv/postgresql.conf" {
		t.Errorf("on the host: %s", got)
	}
}

func TestInitdbArgs(t *testing.T) {
	a := strings.Join(initdbArgs(newLayout("/lab/srv")), " ")
	for _, w := range []string{"--pgdata=/lab/srv/data", "--username=postgres", "--auth-local=peer",
		"--auth-host=scram-sha-256", "--no-sync"} {
		if !strings.Contains(a, w) {
			t.Errorf("initdb args lack %s: %q", w, a)
		}
	}
}

func TestFindBinDir(t *testing.T) {
	root := t.TempDir()
	mk := func(dir string, bins ...string) {
		t.Helper()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, b := range bins {
			if err := os.WriteFile(filepath.Join(dir, b), nil, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	noPath := func(string) (string, error) { return "", os.ErrNotExist }
	if _, err := findBinDir(root, noPath); err == nil {
		t.Error("empty root: no error")
	}
	mk(filepath.Join(root, "13", "bin"), "initdb", "postgres", "psql")
	mk(filepath.Join(root, "15", "bin"), "initdb", "postgres", "psql")
	mk(filepath.Join(root, "16", "bin"), "psql") // client only: not a server
	if got, err := findBinDir(root, noPath); err != nil || got != filepath.Join(root, "15", "bin") {
		t.Errorf("findBinDir = %q, %v; want the highest full version", got, err)
	}
	other := filepath.Join(t.TempDir(), "bin")
	mk(other, "initdb", "postgres", "psql")
	inPath := func(string) (string, error) { return filepath.Join(other, "initdb"), nil }
	if got, err := findBinDir(t.TempDir(), inPath); err != nil || got != other {
		t.Errorf("from PATH: %q, %v", got, err)
	}
}

func TestStopIsSafeOnNilAndForeignPids(t *testing.T) {
	// The last: a server rebuilt from a stale state file whose pid is now the test's.
	for _, s := range []*Server{nil, {}, {Pid: os.Getpid()}} {
		if err := s.Stop(context.Background()); err != nil || (s != nil && s.Pid > 0 && s.alive()) {
			t.Errorf("Stop(%+v) = %v; a foreign pid must not pass for a postmaster", s, err)
		}
	}
}

func TestInstallCerts(t *testing.T) {
	lab := t.TempDir()
	files, err := pki.ServerSet([]string{"198.18.0.2"}, BenchUser)
	if err != nil {
		t.Fatal(err)
	}
	if err := pki.WriteFiles(lab, files); err != nil {
		t.Fatal(err)
	}
	l := newLayout(filepath.Join(t.TempDir(), "srv"))
	if err := installCerts(Config{CertDir: lab}, l); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{pki.CAFile, pki.ServerCertFile, pki.ServerKeyFile, pki.ClientCertFile, pki.ClientKeyFile} {
		b, err := os.ReadFile(filepath.Join(l.CertDir, name))
		if err != nil || string(b) != string(files[name]) {
			t.Errorf("%s not copied: %v", name, err)
		}
	}
	if fi, err := os.Stat(filepath.Join(l.CertDir, pki.ServerKeyFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("server key mode %v, %v; postgres wants 0600", fi.Mode().Perm(), err)
	}
	if _, err := os.Stat(filepath.Join(l.CertDir, pki.CAKeyFile)); err == nil {
		t.Error("the CA key was copied: the server does not need it")
	}
	// Without a set to copy, one is generated once and kept on the next start.
	gen := newLayout(filepath.Join(t.TempDir(), "srv"))
	if err := installCerts(Config{BindAddress: "127.0.0.1"}, gen); err != nil {
		t.Fatal(err)
	}
	first, _ := os.ReadFile(filepath.Join(gen.CertDir, pki.CAFile))
	if err := installCerts(Config{BindAddress: "127.0.0.1"}, gen); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(filepath.Join(gen.CertDir, pki.CAFile)); len(first) == 0 || string(again) != string(first) {
		t.Error("a second start replaced the generated CA")
	}
	if err := installCerts(Config{CertDir: t.TempDir()}, newLayout(t.TempDir())); err == nil {
		t.Error("an empty CertDir was accepted")
	}
}
