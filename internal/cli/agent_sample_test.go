package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/metrics"
)

func TestAgentSampleFlagErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--every", "0s"}, "--every 0s: want an interval of at least 10ms, like 1s"},
		{[]string{"--every", "1ms"}, "--every 1ms"},
		{[]string{"--for", "0s"}, "--for 0s: want a positive upper bound, like 2h"},
		{[]string{"--up-class", "eth0"}, `--up-class: class "eth0": want DEV:CLASSID, like eth0:1:1`},
		{[]string{"--down-class", "eth0:1:zz"}, "--down-class: class \"eth0:1:zz\""},
		{[]string{"--up-class", "eth0:1:1", "--up-iface", "eth0"}, "--up-class and --up-iface: give one source for the up direction"},
		{[]string{"--down-iface", "eth0:1"}, `--down-iface "eth0:1": want an interface name`},
		{[]string{"--comm", "a-name-longer-than-15"}, "--comm \"a-name-longer-than-15\": want a process name of 1 to 15 characters"},
		{[]string{"--pid", "0"}, `--pid "0": want a process id, a positive integer`},
		{[]string{"--pid", "x"}, `--pid "x"`},
		{[]string{"extra"}, `unexpected argument "extra"`},
		{[]string{"--bogus"}, "flag provided but not defined: -bogus"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			p, out, errb, _ := testProcess(t, true)
			code := Main(append([]string{"agent", "sample"}, tc.args...), p)
			if code != 2 || !strings.Contains(errb.String(), tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, errb.String(), tc.want)
			}
			if out.Len() != 0 {
				t.Errorf("printed lines on a bad invocation: %q", out.String())
			}
		})
	}
	p, _, errb, _ := testProcess(t, true)
	if code := Main([]string{"agent", "nope"}, p); code != 2 || !strings.Contains(errb.String(), "deadman, sample, mariadb") {
		t.Errorf("unknown tool: exit %d, %q", code, errb.String())
	}
}

// fakeHost is a procfs root with a machine counter and one interface.
func fakeHost(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "net"), 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"stat":    "cpu  100 0 50 5000 7 0 0 0 0 0\n",
		"net/dev": "h\nh\neth0: 10 1 0 0 0 0 0 0 20 2 0 0 0 0 0 0\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// The agent prints a line at once and one per interval, and --for ends it.
func TestAgentSamplePrintsLinesUntilFor(t *testing.T) {
	p, out, errb, _ := testProcess(t, true)
	p.ProcRoot = fakeHost(t)
	start := time.Now()
	code := Main([]string{"agent", "sample", "--every", "20ms", "--for", "150ms", "--up-iface", "eth0", "--down-iface", "eth0"}, p)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v with --for 150ms", d)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) < 3 {
		t.Fatalf("%d lines in 150ms at 20ms: %q", len(lines), out.String())
	}
	var prev int64
	for _, s := range lines {
		l, err := metrics.ParseAgentLine(s)
		if err != nil {
			t.Fatal(err)
		}
		if l.UnixNano <= prev || l.MachineTicks != 150 || l.UpBytes != 0 {
			t.Errorf("line %+v", l)
		}
		prev = l.UnixNano
	}
}

// SIGTERM ends the agent well before --for; a closed stdin does not.
func TestAgentSampleStopsOnSignal(t *testing.T) {
	p, out, errb, _ := testProcess(t, true)
	p.ProcRoot = fakeHost(t)
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

// A host whose interface is missing fails at once, naming it.
func TestAgentSampleMissingInterface(t *testing.T) {
	p, _, errb, _ := testProcess(t, true)
	p.ProcRoot = fakeHost(t)
	if code := Main([]string{"agent", "sample", "--up-iface", "eth9", "--for", "1s"}, p); code != 1 || !strings.Contains(errb.String(), `"eth9"`) {
		t.Errorf("exit %d, %q", code, errb.String())
	}
}
