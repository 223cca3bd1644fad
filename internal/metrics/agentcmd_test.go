package metrics

import (
	"bytes"
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// parseSample parses args as `wirelab agent sample` does.
func parseSample(args []string) (SampleCommand, error) {
	fs := flag.NewFlagSet("agent sample", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := AddSampleFlags(fs)
	if err := fs.Parse(args); err != nil {
		return SampleCommand{}, err
	}
	return f.Command()
}

// What a backend renders, the agent parses back to the same command.
func TestSampleCommandRoundTrip(t *testing.T) {
	up, _ := ParseTCClass("eth2:1:1")
	down, _ := ParseTCClass("wlifb-eth2:1:1")
	for _, c := range []SampleCommand{
		{Every: time.Second, For: 6 * time.Hour, UpClass: up, DownClass: down, Comms: []string{"mariadbd", "sysbench"}},
		{Every: 20 * time.Millisecond, For: 90 * time.Minute, UpIface: "eth0", DownIface: "eth1", PIDs: []int{7001, 7002}, Trees: []int{42}},
		{Every: time.Second, For: time.Hour},
	} {
		argv := c.Argv("/tmp/wirelab")
		if !reflect.DeepEqual(argv[:3], []string{"/tmp/wirelab", "agent", "sample"}) {
			t.Fatalf("argv %q", argv)
		}
		got, err := parseSample(argv[3:])
		if err != nil {
			t.Fatalf("%q: %v", argv, err)
		}
		if !reflect.DeepEqual(got, c) {
			t.Errorf("%q parses to %+v, want %+v", argv, got, c)
		}
	}
	want := "/tmp/wirelab agent sample --every 1s --for 6h --up-class eth2:1:1 --down-class wlifb-eth2:1:1 --comm mariadbd --comm sysbench"
	c := SampleCommand{Every: time.Second, For: 6 * time.Hour, UpClass: up, DownClass: down, Comms: []string{"mariadbd", "sysbench"}}
	if got := strings.Join(c.Argv("/tmp/wirelab"), " "); got != want {
		t.Errorf("argv\n %s\nwant\n %s", got, want)
	}
}

func TestSampleFlagErrors(t *testing.T) {
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
		{[]string{"--tree", "-3"}, `--tree "-3": want a process id`},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			if _, err := parseSample(tc.args); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// agentHost is a procfs root with a machine counter and one interface.
func agentHost(t *testing.T) string {
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

// The agent prints a line at once and one per interval, and For ends it.
func TestRunAgentPrintsLinesUntilFor(t *testing.T) {
	c := SampleCommand{Every: 20 * time.Millisecond, For: 150 * time.Millisecond, UpIface: "eth0", DownIface: "eth0"}
	var out bytes.Buffer
	start := time.Now()
	if err := c.RunAgent(context.Background(), c.Config(agentHost(t), nil, nil), &out); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v with For 150ms", d)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) < 3 {
		t.Fatalf("%d lines in 150ms at 20ms: %q", len(lines), out.String())
	}
	var prev int64
	for _, s := range lines {
		l, err := ParseAgentLine(s)
		if err != nil {
			t.Fatal(err)
		}
		if l.UnixNano <= prev || l.MachineTicks != 150 || l.UpBytes != 0 {
			t.Errorf("line %+v", l)
		}
		prev = l.UnixNano
	}
}

// A host whose interface is missing fails at once, naming it.
func TestRunAgentMissingInterface(t *testing.T) {
	c := SampleCommand{Every: time.Second, For: time.Second, UpIface: "eth9"}
	err := c.RunAgent(context.Background(), c.Config(agentHost(t), nil, nil), io.Discard)
	if err == nil || !strings.Contains(err.Error(), `"eth9"`) {
		t.Errorf("error %v, want one naming eth9", err)
	}
}

// failingWriter fails every write: nobody reads the agent's stdout any more.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, os.ErrClosed }

// A failed write ends the agent instead of it printing to nobody until For.
func TestRunAgentEndsWhenNobodyReads(t *testing.T) {
	c := SampleCommand{Every: 10 * time.Millisecond, For: time.Hour}
	done := make(chan error, 1)
	go func() { done <- c.RunAgent(context.Background(), c.Config(agentHost(t), nil, nil), failingWriter{}) }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "write line") {
			t.Errorf("error %v, want a failed write", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("still running 5s after its first write failed")
	}
}
