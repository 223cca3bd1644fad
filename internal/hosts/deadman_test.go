package hosts

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/execx"
)

var testUndo = [][]string{{"tc", "qdisc", "del", "dev", "eth0", "root"}, {"ip", "link", "del", "wlifb-eth0"}}

// watch starts the switch on a fresh renewal file and returns it and a channel that gets
// Watch's result.
func watch(t *testing.T, ttl time.Duration, f *execx.Fake) (string, context.CancelFunc, chan error) {
	t.Helper()
	renew := filepath.Join(t.TempDir(), "renew")
	if err := os.WriteFile(renew, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	done := make(chan error, 1)
	d := &Deadman{Renew: renew, TTL: ttl, Undo: testUndo, Runner: f, Poll: 10 * time.Millisecond}
	go func() { done <- d.Watch(ctx) }()
	return renew, cancel, done
}

func TestDeadmanFiresWhenNotRenewed(t *testing.T) {
	f := &execx.Fake{}
	const ttl = 300 * time.Millisecond
	renew, _, done := watch(t, ttl, f)
	start := time.Now()
	// Renewed for 3 TTLs: the switch must hold.
	for i := 0; i < 9; i++ {
		time.Sleep(ttl / 3)
		now := time.Now()
		if err := os.Chtimes(renew, now, now); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-done:
			t.Fatalf("fired after %s although renewed every TTL/3: %v", time.Since(start), err)
		default:
		}
	}
	stopped := time.Now()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(3 * ttl):
		t.Fatal("did not fire within 3 TTLs of the last renewal")
	}
	if took := time.Since(stopped); took < ttl-50*time.Millisecond {
		t.Errorf("fired %s after the last renewal, before the TTL %s", took, ttl)
	}
	if got, want := strings.Join(f.Lines(), "\n"), "tc qdisc del dev eth0 root\nip link del wlifb-eth0"; got != want {
		t.Errorf("undo ran:\n%s\nwant:\n%s", got, want)
	}
}

func TestDeadmanUndoesWhenStoppedOrFileGone(t *testing.T) {
	f := &execx.Fake{}
	_, cancel, done := watch(t, time.Hour, f)
	cancel()
	if err := waitErr(t, done); err != nil {
		t.Fatal(err)
	}
	if len(f.Lines()) != 2 {
		t.Errorf("stopped: want the undo run, got %q", f.Lines())
	}
	g := &execx.Fake{}
	renew, _, done2 := watch(t, time.Hour, g)
	_ = os.Remove(renew)
	if err := waitErr(t, done2); err != nil {
		t.Fatal(err)
	}
	if len(g.Lines()) != 2 {
		t.Errorf("file gone: want the undo run, got %q", g.Lines())
	}
}

func waitErr(t *testing.T, c chan error) error {
	t.Helper()
	select {
	case err := <-c:
		return err
	case <-time.After(5 * time.Second):
		t.Fatal("the switch did not return")
		return nil
	}
}

func TestRunUndoToleratesWhatIsGone(t *testing.T) {
	f := &execx.Fake{Errors: map[string]error{
		"tc qdisc del":   errors.New("Error: Cannot delete qdisc with handle of zero."),
		"ip link del":    errors.New(`Cannot find device "wlifb-eth0"`),
		"tc filter boom": errors.New("RTNETLINK answers: Operation not permitted"),
	}}
	if err := RunUndo(context.Background(), f, testUndo); err != nil {
		t.Errorf("already clean: %v", err)
	}
	err := RunUndo(context.Background(), f, append([][]string{{"tc", "filter", "boom"}}, testUndo...))
	if err == nil || !strings.Contains(err.Error(), "not permitted") || len(f.Lines()) != 5 {
		t.Errorf("a real failure is reported and the rest still runs: %v, %q", err, f.Lines())
	}
}

func TestUndoFileRoundTrip(t *testing.T) {
	s, err := FormatUndo(UndoFile("eth0"))
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseUndo("# wirelab\n\n" + s)
	if err != nil || joinAll(back) != joinAll(UndoFile("eth0")) {
		t.Errorf("round trip: %q, %v", back, err)
	}
	if _, err := ParseUndo("rm -rf /\n"); err == nil {
		t.Error("an undo file with rm: want it refused")
	}
	if _, err := FormatUndo([][]string{{"tc", "a b"}}); err == nil {
		t.Error("a word with a blank: want it refused")
	}
}

// With a delay line, the switch stops the delayer after the file's commands removed the
// rules that feed it, so no packet is queued to a queue nobody reads.
func TestDeadmanStopsTheDelayerLast(t *testing.T) {
	f := &execx.Fake{}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	d := &Deadman{Renew: filepath.Join(t.TempDir(), "renew"), TTL: time.Hour, Undo: UndoFile("eth0"),
		DelayerPid: "/run/wirelab-delayer-eth0.pid", Runner: f}
	if err := d.Watch(ctx); err != nil {
		t.Fatal(err)
	}
	lines := f.Lines()
	if len(lines) != len(UndoFile("eth0"))+1 {
		t.Fatalf("ran %d commands, want the file's %d and the delayer's stop:\n%s", len(lines), len(UndoFile("eth0")), strings.Join(lines, "\n"))
	}
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "sh -c ") || !strings.Contains(last, "/run/wirelab-delayer-eth0.pid") || !strings.Contains(last, " __delayer ") {
		t.Errorf("last command %q: want the delayer's stop by its pid file", last)
	}
	if !strings.HasPrefix(lines[0], "iptables -t mangle -D OUTPUT") {
		t.Errorf("first command %q: want the rules removed first", lines[0])
	}
}
