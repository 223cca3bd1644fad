package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startRun starts `wirelab run` over three points and waits until the first point's
// sysbench is running in the client host.
func startRun(t *testing.T, state, out, duration string) (*exec.Cmd, *bytes.Buffer, string) {
	t.Helper()
	return startMeasuring(t, state, "run", "--rate", "50mbit", "--threads", "1,2,4", "--duration", duration,
		"--warmup", "0s", "--tables", "1", "--table-size", "1000", "--out", out)
}

// startMeasuring starts wirelab with args and waits until the first point's sysbench is
// running in the client host of the only lab in state.
func startMeasuring(t *testing.T, state string, args ...string) (*exec.Cmd, *bytes.Buffer, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "WIRELAB_STATE_DIR="+state)
	var errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &errb, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		if id := labRunID(t, state); id != "" && sysbenchIn("wl-"+id+"-client") {
			return cmd, &errb, id
		}
		time.Sleep(100 * time.Millisecond)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	t.Fatalf("run never started a point:\n%s", errb.String())
	return nil, nil, ""
}

func TestCtrlCKeepsFinishedPointsAndTearsDown(t *testing.T) {
	skipUnlessRoot(t)
	state, out := t.TempDir(), t.TempDir()
	cmd, logs, id := startRun(t, state, out, "6s")
	t.Cleanup(func() { wl(t, state, "down", "--lab", id) })
	_ = cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("run did not stop after Ctrl-C:\n%s", logs)
	}
	assertGone(t, id)
	var r struct {
		Interrupted bool              `json:"interrupted"`
		Points      []json.RawMessage `json:"points"`
	}
	b, err := os.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatalf("no results.json after Ctrl-C: %v\n%s", err, logs)
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	if !r.Interrupted || len(r.Points) != 1 {
		t.Errorf("interrupted=%v with %d points; want the current point finished and kept, no more", r.Interrupted, len(r.Points))
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Errorf("no report after Ctrl-C: %v", err)
	}
	// The point's per-transaction profile carries the run to other links.
	if !strings.Contains(string(md), "### On other links") || !strings.Contains(string(md), "10gbit") {
		t.Errorf("the report of a real run has no \"On other links\" section with the 10 Gbit table:\n%s", md)
	}
}

func TestSecondCtrlCTearsDownAtOnce(t *testing.T) {
	skipUnlessRoot(t)
	state, out := t.TempDir(), t.TempDir()
	cmd, logs, id := startRun(t, state, out, "60s")
	t.Cleanup(func() { wl(t, state, "down", "--lab", id) })
	start := time.Now()
	_ = cmd.Process.Signal(syscall.SIGINT)
	time.Sleep(200 * time.Millisecond)
	_ = cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("run did not stop after a second Ctrl-C:\n%s", logs)
	}
	// The point is 60 s long: a teardown that waited for it would take far longer than
	// the abort plus mysqld's shutdown.
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("second Ctrl-C took %s to tear down", took)
	}
	assertGone(t, id)
}

// sysbenchIn reports whether a sysbench process runs in the namespace (the link check's
// iperf3 runs there first and must not count as the point).
func sysbenchIn(ns string) bool {
	pids, _ := exec.Command("ip", "netns", "pids", ns).Output()
	for _, pid := range strings.Fields(string(pids)) {
		if comm, _ := os.ReadFile("/proc/" + pid + "/comm"); strings.TrimSpace(string(comm)) == "sysbench" {
			return true
		}
	}
	return false
}

// `wirelab run | head -1`: stdout and stderr are pipes nobody reads any more. wirelab must
// not die of SIGPIPE mid-run and leave the lab: it finishes, writes results and tears down.
func TestClosedOutputPipeStillTearsDown(t *testing.T) {
	skipUnlessRoot(t)
	state, out := t.TempDir(), t.TempDir()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close() // every write to w now fails with EPIPE (and raises SIGPIPE)
	cmd := exec.Command(bin, "run", "--threads", "1", "--duration", "2s", "--warmup", "0s",
		"--tables", "1", "--table-size", "1000", "--out", out)
	cmd.Env = append(os.Environ(), "WIRELAB_STATE_DIR="+state)
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	id := ""
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	deadline := time.After(3 * time.Minute)
wait:
	for {
		select {
		case err = <-done:
			break wait
		case <-deadline:
			_ = cmd.Process.Signal(os.Interrupt)
			t.Fatal("wirelab run did not finish in 3 minutes")
		case <-time.After(50 * time.Millisecond):
			if id == "" {
				id = labRunID(t, state)
			}
		}
	}
	if st, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && st.Signaled() {
		t.Fatalf("wirelab died of %v", st.Signal())
	}
	if err != nil {
		t.Fatalf("wirelab run: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "results.json")); err != nil {
		t.Errorf("no results: %v", err)
	}
	if ids, _ := os.ReadDir(state); len(ids) != 0 {
		t.Errorf("lab state left: %v", ids)
	}
	if id == "" {
		t.Fatal("never saw the lab's state file")
	}
	assertGone(t, id)
}
