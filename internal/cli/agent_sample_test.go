package cli

import (
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Bad flags are usage errors (exit 2, nothing printed); the messages are
// metrics.SampleFlags' (metrics/agentcmd_test.go).
func TestAgentSampleFlagErrors(t *testing.T) {
	for _, args := range [][]string{{"--every", "0s"}, {"--up-class", "eth0"}, {"extra"}, {"--bogus"}} {
		p, out, errb, _ := testProcess(t, true)
		if code := Main(append([]string{"agent", "sample"}, args...), p); code != 2 || out.Len() != 0 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2 and nothing printed", args, code, out.String(), errb.String())
		}
	}
	p, _, errb, _ := testProcess(t, true)
	if code := Main([]string{"agent", "nope"}, p); code != 2 || !strings.Contains(errb.String(), "deadman, sample, mariadb") {
		t.Errorf("unknown tool: exit %d, %q", code, errb.String())
	}
}

// SIGTERM ends the agent well before --for; a closed stdin does not.
func TestAgentSampleStopsOnSignal(t *testing.T) {
	p, out, errb, _ := testProcess(t, true)
	p.ProcRoot = "/proc" // the machine's counters: the agent reads nothing else here
	sig := make(chan os.Signal, 1)
	p.Interrupts = sig
	done := make(chan int, 1)
	go func() { done <- Main([]string{"agent", "sample", "--every", "10ms", "--for", "1h"}, p) }()
	time.Sleep(100 * time.Millisecond)
	select {
	case code := <-done:
		t.Fatalf("ended on its own with exit %d (stdin is empty, which must not stop it): %s", code, errb.String())
	default:
	}
	sig <- syscall.SIGTERM
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d: %s", code, errb.String())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("still running 5s after SIGTERM")
	}
	if !strings.HasPrefix(out.String(), "{") {
		t.Errorf("output %q", out.String())
	}
}
