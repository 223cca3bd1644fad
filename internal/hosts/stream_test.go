package hosts

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh/knownhosts"
)

func streamTestHost(t *testing.T) *SSH {
	t.Helper()
	key, signer, _ := clientKey(t)
	srv := startTestSSHServer(t, signer.PublicKey())
	kh := writeKnownHosts(t, knownhosts.Line([]string{srv.addr}, srv.hostKey.PublicKey()))
	return dialTest(t, SSHConfig{Name: "db1", Addr: srv.addr, User: "u", KeyFile: key, KnownHosts: kh})
}

// gone reports whether pid has exited (a zombie has).
func gone(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return err != nil || strings.Contains(string(b), ") Z ")
}

func TestSSHStreamLinesPidEnvAndFailure(t *testing.T) {
	h := streamTestHost(t)
	ctx := context.Background()
	var mu sync.Mutex
	var lines []string
	var pid int
	var cmdline string
	out, _, err := h.Stream(ctx, []string{"sh", "-c", `echo "$WL_X"; for i in 1 2 3; do echo $i; sleep 0.05; done`},
		[]string{"WL_X=it's $x"},
		func(p int) { pid = p },
		func(l string) {
			mu.Lock()
			defer mu.Unlock()
			if lines = append(lines, l); len(lines) == 1 { // it runs: its sh has exec'd
				b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
				cmdline = strings.ReplaceAll(string(b), "\x00", " ")
			}
		})
	if err != nil {
		t.Fatal(err)
	}
	if want := "it's $x,1,2,3"; strings.Join(lines, ",") != want {
		t.Errorf("onLine got %q, want %q", lines, want)
	}
	if out != "it's $x\n1\n2\n3\n" {
		t.Errorf("stdout %q: the pid line must not be in it", out)
	}
	if pid <= 1 || !strings.Contains(cmdline, "for i in 1 2 3") {
		t.Errorf("onStart pid %d runs %q, want the command itself", pid, cmdline)
	}

	_, stderr, err := h.Stream(ctx, []string{"sh", "-c", "echo one >&2; echo two >&2; exit 4"}, nil, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "host db1") || !strings.Contains(err.Error(), "one; two") ||
		!strings.Contains(err.Error(), "status 4") || stderr != "one\ntwo\n" {
		t.Errorf("a failing command: %v (stderr %q)", err, stderr)
	}
	if _, _, err := h.Stream(ctx, []string{"true"}, []string{"1X=2"}, nil, nil); err == nil {
		t.Error("an environment entry that is no variable name must be refused")
	}
}

func TestSSHStreamCancelKillsTheGroup(t *testing.T) {
	h := streamTestHost(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var pid, child int
	started := time.Now()
	_, _, err := h.Stream(ctx, []string{"sh", "-c", "sleep 30 & echo $!; wait"}, nil,
		func(p int) { pid = p },
		func(l string) { child, _ = strconv.Atoi(l); cancel() })
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "host db1") {
		t.Fatalf("cancelled stream: %v", err)
	}
	if took := time.Since(started); took > 5*time.Second {
		t.Errorf("cancel took %s", took)
	}
	deadline := time.Now().Add(3 * time.Second)
	for (!gone(pid) || !gone(child)) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if pid <= 1 || child <= 1 || !gone(pid) || !gone(child) {
		t.Errorf("after cancel: command %d gone %v, its child %d gone %v", pid, gone(pid), child, gone(child))
	}
}

func TestDryHostStreamRunsNothing(t *testing.T) {
	var b strings.Builder
	d := &DryHost{Host: "db1", W: &b}
	called := false
	out, _, err := d.Stream(context.Background(), []string{"sysbench", "run"}, []string{"A=b c"},
		func(int) { called = true }, func(string) { called = true })
	if err != nil || out != "" || called || b.String() != "db1: stream: A='b c' sysbench run\n" {
		t.Errorf("dry stream: %q, %v, called %v; printed %q", out, err, called, b.String())
	}
}
