package hosts

import (
	"context"
	"errors"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/nstest"
)

// The stream tests use a /24 of their own, so they can run beside the other SSH tests.
const streamAddrA, streamAddrB = "198.18.11.1", "198.18.11.2"

// dialPair connects from inside p's host A to addr, waiting up to 5 s for sshd to listen.
func dialPair(t *testing.T, p *nstest.SSHPair, name, addr string) *SSH {
	t.Helper()
	cfg := SSHConfig{Name: name, Addr: addr, User: "root", KeyFile: p.Key, KnownHosts: p.KnownHosts,
		Timeout: 3 * time.Second, Dial: nstest.DialIn(p.NSA)}
	h, err := DialSSHWait(context.Background(), cfg, 5*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", name, err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

func TestSSHStreamOnRealSSHD(t *testing.T) {
	nstest.SkipUnlessSSHD(t)
	p := nstest.NewSSHPair(t, streamAddrA, streamAddrB)
	b := dialPair(t, p, "server1", streamAddrB)
	ctx := context.Background()

	var mu sync.Mutex
	var lines []string
	var at []time.Duration
	pid, pidInB := 0, false // checked while the command runs: the pid is gone after
	t0 := time.Now()
	out, _, err := b.Stream(ctx, []string{"sh", "-c", `for i in 1 2 3; do echo $i; sleep 0.2; done; echo "$WL_WHO"`},
		[]string{"WL_WHO=server one"},
		func(p0 int) {
			pid = p0
			out, _ := exec.Command("ip", "netns", "pids", p.NSB).Output()
			pidInB = slices.Contains(strings.Fields(string(out)), strconv.Itoa(p0))
		},
		func(l string) { mu.Lock(); lines = append(lines, l); at = append(at, time.Since(t0)); mu.Unlock() })
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(lines, ","); got != "1,2,3,server one" || out != "1\n2\n3\nserver one\n" {
		t.Errorf("lines %q, stdout %q", got, out)
	}
	if pid <= 1 || !pidInB {
		t.Errorf("onStart pid %d (in B: %v)", pid, pidInB)
	}
	// Lines arrive as they are written, not all at the end.
	if len(at) == 4 && at[3]-at[0] < 400*time.Millisecond {
		t.Errorf("lines arrived at %v: not streamed", at)
	}
	t.Logf("pid %d, lines at %v", pid, at)

	_, _, err = b.Stream(ctx, []string{"sh", "-c", "echo no such table >&2; exit 3"}, nil, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "host server1") || !strings.Contains(err.Error(), "no such table") {
		t.Errorf("a failing command: %v", err)
	}
}

func TestSSHStreamCancelKillsRemoteProcess(t *testing.T) {
	nstest.SkipUnlessSSHD(t)
	p := nstest.NewSSHPair(t, streamAddrA, streamAddrB)
	b := dialPair(t, p, "server1", streamAddrB)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var pid, child int
	_, _, err := b.Stream(ctx, []string{"sh", "-c", "sleep 60 & echo $!; wait"}, nil,
		func(p0 int) { pid = p0 },
		func(l string) { child, _ = strconv.Atoi(l); cancel() })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled stream: %v", err)
	}
	cancelled := time.Now()
	// kill -0 also reaches a zombie, which is dead but not yet reaped by whoever
	// inherited it.
	alive := func(pid int) bool {
		if _, err := b.Run(context.Background(), "kill", "-0", strconv.Itoa(pid)); err != nil {
			return false
		}
		stat, err := b.ReadFile(context.Background(), "/proc/"+strconv.Itoa(pid)+"/stat")
		return err == nil && !strings.Contains(string(stat), ") Z ")
	}
	for (alive(pid) || alive(child)) && time.Since(cancelled) < 3*time.Second {
		time.Sleep(100 * time.Millisecond)
	}
	if pid <= 1 || child <= 1 || alive(pid) || alive(child) {
		t.Fatalf("3 s after cancel: the command %d alive %v, its child %d alive %v", pid, alive(pid), child, alive(child))
	}
	t.Logf("command %d and its child %d gone %s after cancel: %v", pid, child, time.Since(cancelled).Round(time.Millisecond), err)
}

func TestNSStreamInsideTheNamespace(t *testing.T) {
	nstest.SkipUnlessRoot(t, "ip")
	ns := nstest.Netns(t, "stream")
	st := &lab.State{RunID: "stream", Namespaces: map[string]string{lab.Client: ns}}
	h := NS{Lab: lab.Attach(st, lab.Options{}), Role: lab.Client}
	var lines []string
	pid := 0
	out, _, err := h.Stream(context.Background(), []string{"sh", "-c", `echo $WL_X; sleep 0.1; echo done`},
		[]string{"WL_X=x y"}, func(p int) { pid = p }, func(l string) { lines = append(lines, l) })
	if err != nil || out != "x y\ndone\n" || strings.Join(lines, ",") != "x y,done" || pid <= 1 {
		t.Errorf("stream in %s: %q, %q, pid %d, %v", ns, out, lines, pid, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	_, _, err = h.Stream(ctx, []string{"sleep", "30"}, nil, func(int) { cancel() }, nil)
	if !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), "host client: ") {
		t.Errorf("cancelled: %v", err)
	}
	if _, _, err = h.Stream(context.Background(), []string{"false"}, nil, nil, nil); err == nil || !strings.Contains(err.Error(), "host client: false: ") {
		t.Errorf("failing: %v", err)
	}
}
