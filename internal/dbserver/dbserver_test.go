package dbserver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/nstest"
)

func TestSpawnAndStop(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "out.log")
	// sleep ignores nothing: SIGINT ends it, the graceful path.
	p, err := Spawn("sleeper", log, dir, "", []string{"sleep"}, "sh", "-c", "echo started; exec sleep 30")
	if err != nil {
		t.Fatal(err)
	}
	if !p.Alive() {
		t.Fatal("spawned process not alive")
	}
	if pgid, _ := syscall.Getpgid(p.Pid); pgid != p.Pid {
		t.Errorf("pgid %d, want the process to lead its own group (%d)", pgid, p.Pid)
	}
	// Adopted by pid, as from a state file: recognised by its comm once sh has exec'd.
	deadline := time.Now().Add(5 * time.Second)
	for !Adopt("sleeper", p.Pid, "sleep").Alive() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if !Adopt("sleeper", p.Pid, "sleep").Alive() {
		t.Fatal("adopted process not recognised by its comm")
	}
	if err := p.Stop(context.Background(), syscall.SIGINT, 5*time.Second, nil); err != nil {
		t.Fatal(err)
	}
	if p.Alive() {
		t.Error("alive after Stop")
	}
	if err := p.Stop(context.Background(), syscall.SIGINT, 5*time.Second, nil); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	if b, _ := os.ReadFile(log); string(b) != "started\n" {
		t.Errorf("log = %q", b)
	}
}

func TestStopKillsTheTreeWhenTheSignalIsIgnored(t *testing.T) {
	dir := t.TempDir()
	// The shell ignores SIGINT and has two children: one in its group, one in a session of
	// its own (as every postmaster child is). Stop must SIGKILL all three.
	p, err := Spawn("stubborn", filepath.Join(dir, "log"), "", "", []string{"sh"}, "sh", "-c",
		"trap '' INT; sleep 30 & setsid sleep 30 & wait")
	if err != nil {
		t.Fatal(err)
	}
	var kids []int
	for deadline := time.Now().Add(5 * time.Second); len(kids) < 2 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		kids = nil
		for _, c := range p.Tree() {
			if c != p.Pid {
				kids = append(kids, c)
			}
		}
	}
	if len(kids) != 2 {
		t.Fatalf("children of the shell: %v, want 2", kids)
	}
	start := time.Now()
	if err := p.Stop(context.Background(), syscall.SIGINT, 300*time.Millisecond, nil); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Stop took %s", d)
	}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if !Adopt("child", kids[0], "sleep").Alive() && !Adopt("child", kids[1], "sleep").Alive() {
			return
		}
	}
	t.Errorf("children %v survived the kill", kids)
}

func TestStopIsSafeOnNilAndForeignPids(t *testing.T) {
	ctx := context.Background()
	var nilProc *Process
	if err := nilProc.Stop(ctx, syscall.SIGTERM, time.Second, nil); err != nil {
		t.Errorf("nil: %v", err)
	}
	// A stale pid that now belongs to someone else (the test binary) is not signalled.
	p := Adopt("mariadb", os.Getpid(), "mariadbd")
	if p.Alive() {
		t.Fatal("the test binary was taken for mariadbd")
	}
	if err := p.Stop(ctx, syscall.SIGKILL, time.Second, nil); err != nil {
		t.Errorf("foreign pid: %v", err)
	}
}

func TestCheckTraversable(t *testing.T) {
	base := nstest.SharedDir(t, "wldbs")
	closed := filepath.Join(base, "closed")
	if err := os.MkdirAll(filepath.Join(closed, "srv"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := CheckTraversable(filepath.Join(closed, "srv"), "postgres"); err == nil || !strings.Contains(err.Error(), closed) {
		t.Errorf("0700 parent: err = %v, want it to name %s", err, closed)
	}
	if err := CheckTraversable(filepath.Join(base, "srv"), "postgres"); err != nil {
		t.Errorf("0755 parents: %v", err)
	}
}

func TestTailFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "error.log")
	if err := os.WriteFile(p, []byte("a\nb\nc\nd\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := TailFile(p, 2); got != "c\nd" {
		t.Errorf("tail = %q", got)
	}
	if got := TailFile(p+".missing", 2); !strings.Contains(got, "cannot read") {
		t.Errorf("missing file: %q", got)
	}
}

func TestListenHosts(t *testing.T) {
	if got := strings.Join(ListenHosts("198.18.0.2, 0.0.0.0,127.0.0.1,*,::,"), " "); got != "198.18.0.2 127.0.0.1" {
		t.Errorf("ListenHosts = %q", got)
	}
}

func TestParseTable(t *testing.T) {
	// psql -A -F '\t' -P footer=off -P null=NULL and mariadb --batch print the same shape.
	rows := ParseTable("id\ts\n1\ta b\n2\tNULL\n")
	if len(rows) != 2 || rows[0]["id"] != "1" || rows[0]["s"] != "a b" || rows[1]["s"] != "NULL" {
		t.Errorf("rows = %v", rows)
	}
	if rows := ParseTable("id\ts\n"); rows != nil {
		t.Errorf("header only: %v", rows)
	}
}

func TestRandomPasswordAndAbbrev(t *testing.T) {
	a, err := RandomPassword()
	b, _ := RandomPassword()
	if err != nil || len(a) != 32 || a == b {
		t.Errorf("RandomPassword = %q, %q, %v", a, b, err)
	}
	if got := Abbrev("SELECT\n  1"); got != "SELECT 1" {
		t.Errorf("Abbrev = %q", got)
	}
	if got := Abbrev(strings.Repeat("x", 100)); len(got) != 80 || !strings.HasSuffix(got, "...") {
		t.Errorf("Abbrev long = %q", got)
	}
}
