package dbserver

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// sleeper is a Kind whose process is a sleep that SIGINT ends.
var sleeper = Kind{Label: "sleeper", Comm: []string{"sleep"}, Signal: syscall.SIGINT, StopTimeout: 5 * time.Second}

func TestHandleSpawnsStopsAndAdoptsByPid(t *testing.T) {
	dir := t.TempDir()
	var h Handle
	pid, err := h.Spawn(sleeper, filepath.Join(dir, "log"), dir, "", nil, "sleep", "30")
	if err != nil {
		t.Fatal(err)
	}
	if p := h.Process(sleeper, pid); p.Done() == nil || !p.Alive() {
		t.Fatal("the spawned process is not the one held")
	}
	// A Handle rebuilt from a state file knows only the pid: it adopts the process.
	var fromState Handle
	if !fromState.Process(sleeper, pid).Alive() {
		t.Fatal("the adopted pid is not recognised by its comm")
	}
	if err := fromState.Stop(context.Background(), sleeper, pid, 0, nil); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); h.Process(sleeper, pid).Alive() && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if h.Process(sleeper, pid).Alive() {
		t.Error("alive after Stop")
	}
	if err := h.Stop(context.Background(), sleeper, pid, 0, nil); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

func TestHandleStopIsSafeWithoutPidAndOnForeignPids(t *testing.T) {
	var h Handle
	if err := h.Stop(context.Background(), sleeper, 0, 0, nil); err != nil {
		t.Errorf("no pid: %v", err)
	}
	// A stale state file's pid that now belongs to someone else (the test) is not signalled.
	if h.Process(sleeper, os.Getpid()).Alive() {
		t.Fatal("the test binary was taken for a sleeper")
	}
	if err := h.Stop(context.Background(), sleeper, os.Getpid(), time.Second, nil); err != nil {
		t.Errorf("foreign pid: %v", err)
	}
}

func TestAbandonStopsWithItsOwnDeadlineAndOnlyLogs(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the start failed because ctx ended: the stop must still get its time
	var got time.Duration
	var log strings.Builder
	Abandon(ctx, func(c context.Context) error {
		if c.Err() != nil {
			t.Error("the stop's context has already ended")
		}
		d, _ := c.Deadline()
		got = time.Until(d)
		return errors.New("still running")
	}, 10*time.Second, slog.New(slog.NewTextHandler(&log, nil)))
	if got < 14*time.Second || got > 15*time.Second {
		t.Errorf("stop deadline %s away, want the stop timeout and a 5 s margin", got)
	}
	if !strings.Contains(log.String(), "stop after failed start") || !strings.Contains(log.String(), "still running") {
		t.Errorf("log = %q", log.String())
	}
}
