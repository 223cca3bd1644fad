package dbserver

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

var errTestNotReady = errors.New("test server not ready")

func TestWaitReady(t *testing.T) {
	dir := t.TempDir()
	sock, log := filepath.Join(dir, "sock"), filepath.Join(dir, "log")
	// The "server" writes its log, then its socket; the probe fails twice before it answers.
	p, err := Spawn("fake", log, dir, "", []string{"sh"}, "sh", "-c", "echo booting; sleep 0.2; touch sock; sleep 30")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Stop(context.Background(), syscall.SIGKILL, time.Second, nil) })
	probes := 0
	r := Ready{Socket: sock, Log: log, Timeout: 5 * time.Second, Every: 20 * time.Millisecond, NotReady: errTestNotReady,
		Probe: func(context.Context) error {
			if probes++; probes < 3 {
				return errors.New("starting up")
			}
			return nil
		}}
	if err := p.WaitReady(context.Background(), r); err != nil || probes != 3 {
		t.Errorf("WaitReady = %v after %d probes", err, probes)
	}

	// Never answers: the sentinel, the last probe error and the log.
	r.Timeout, r.Probe = 200*time.Millisecond, func(context.Context) error { return errors.New("still starting") }
	if err := p.WaitReady(context.Background(), r); !errors.Is(err, errTestNotReady) ||
		!strings.Contains(err.Error(), "still starting") || !strings.Contains(err.Error(), "booting") {
		t.Errorf("timeout: %v", err)
	}
	// The caller's cancellation is not a server failure.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := p.WaitReady(ctx, r); errors.Is(err, errTestNotReady) || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

func TestWaitReadyServerExits(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	p, err := Spawn("fake", log, dir, "", []string{"sh"}, "sh", "-c", "echo 'FATAL: bad setting'; exit 1")
	if err != nil {
		t.Fatal(err)
	}
	err = p.WaitReady(context.Background(), Ready{Socket: filepath.Join(dir, "sock"), Log: log, Timeout: 10 * time.Second,
		Every: 20 * time.Millisecond, NotReady: errTestNotReady, Probe: func(context.Context) error { return nil }})
	if !errors.Is(err, errTestNotReady) || !strings.Contains(err.Error(), "FATAL: bad setting") {
		t.Errorf("exited server: %v", err)
	}
	if _, statErr := os.Stat(filepath.Join(dir, "sock")); statErr == nil {
		t.Error("socket appeared from nowhere")
	}
}
