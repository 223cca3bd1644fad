package hosts

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh/knownhosts"
)

// fakeSudo puts a sudo on PATH that logs its arguments, refuses to run without -n (a
// password would be asked) and runs the rest as a child, as the real sudo does (so the
// command is not a process group leader); the test's SSH server inherits PATH.
func fakeSudo(t *testing.T) (log string) {
	t.Helper()
	dir := t.TempDir()
	log = filepath.Join(dir, "sudo.log")
	script := "#!/bin/sh\nprintf '%s\\n' \"$*\" >> " + ShellQuote(log) + "\n" +
		"[ \"$1\" = -n ] || { echo 'sudo: a password is required' >&2; exit 1; }\nshift\n\"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, "sudo"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return log
}

func sudoTestHost(t *testing.T) *SSH {
	t.Helper()
	key, signer, _ := clientKey(t)
	srv := startTestSSHServer(t, signer.PublicKey())
	kh := writeKnownHosts(t, knownhosts.Line([]string{srv.addr}, srv.hostKey.PublicKey()))
	return dialTest(t, SSHConfig{Name: "db1", Addr: srv.addr, User: "alice", KeyFile: key, KnownHosts: kh, Sudo: true})
}

// With a login user other than root, every command — run, copy, read, start, stop,
// stream and a stream's kill — reaches the host through `sudo -n`, and works as without.
func TestSSHSudoEveryCommand(t *testing.T) {
	log := fakeSudo(t)
	h := sudoTestHost(t)
	ctx := context.Background()
	if out, err := h.Run(ctx, "printf", "%s", "it's a $test"); err != nil || string(out) != "it's a $test" {
		t.Fatalf("Run: %q, %v", out, err)
	}
	dst := filepath.Join(t.TempDir(), "copied")
	if err := h.Copy(ctx, strings.NewReader("payload\n"), dst, 0o640); err != nil {
		t.Fatal(err)
	}
	if got, err := h.ReadFile(ctx, dst); err != nil || string(got) != "payload\n" {
		t.Fatalf("ReadFile after Copy: %q, %v", got, err)
	}
	p, err := h.Start(ctx, "sleeper", []string{"sleep", "30"}, filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if !gone(p.Pid()) {
		t.Errorf("stopped process %d still runs", p.Pid())
	}
	out, _, err := h.Stream(ctx, []string{"sh", "-c", `echo "$WL_X"`}, []string{"WL_X=x y"}, nil, nil)
	if err != nil || out != "x y\n" {
		t.Fatalf("Stream: %q, %v", out, err)
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	for _, want := range []string{"-n sh -c printf", "-n sh -c umask 077 && cat >", "-n sh -c cat -- ", "-n sh -c setsid -f",
		"-n sh -c sh -c 'p=", "-n env WL_X=x y setsid -w sh -c"} {
		found := false
		for _, l := range lines {
			found = found || strings.HasPrefix(l, want)
		}
		if !found {
			t.Errorf("no sudo call starting %q in:\n%s", want, b)
		}
	}
	if len(lines) != 6 {
		t.Errorf("%d sudo calls for 6 commands:\n%s", len(lines), b)
	}
	// The login pre-check runs as the login user, not through sudo, and asks sudo -n for
	// the uid it gives: this test's (the fake sudo changes no user).
	err = CheckLogin(ctx, "db1", "alice", h.Login())
	if os.Geteuid() == 0 && err != nil || os.Geteuid() != 0 && !errors.Is(err, ErrNoRoot) {
		t.Errorf("CheckLogin as uid %d: %v", os.Geteuid(), err)
	}
	if b2, _ := os.ReadFile(log); strings.Count(string(b2), "\n") != 7 {
		t.Errorf("the check must call sudo once, as the login user:\n%s", b2)
	}
}

// Under sudo a cancelled stream still kills the command's whole process group: setsid -w
// makes the streamed sh the leader of one.
func TestSSHSudoStreamCancelKillsTheGroup(t *testing.T) {
	fakeSudo(t)
	h := sudoTestHost(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var pid, child int
	_, _, err := h.Stream(ctx, []string{"sh", "-c", "sleep 30 & echo $!; wait"}, nil,
		func(p int) { pid = p },
		func(l string) { child, _ = strconv.Atoi(l); cancel() })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled stream: %v", err)
	}
	deadline := time.Now().Add(3 * time.Second)
	for (!gone(pid) || !gone(child)) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if pid <= 1 || child <= 1 || !gone(pid) || !gone(child) {
		t.Errorf("after cancel: command %d gone %v, its child %d gone %v", pid, gone(pid), child, gone(child))
	}
}
