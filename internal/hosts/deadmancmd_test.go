package hosts

import (
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func parseDeadman(args []string) (DeadmanCommand, error) {
	fs := flag.NewFlagSet("agent deadman", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := AddDeadmanFlags(fs)
	if err := fs.Parse(args); err != nil {
		return DeadmanCommand{}, err
	}
	return f.Command()
}

// What RemoteLink renders, the switch parses back to the same command.
func TestDeadmanCommandRoundTrip(t *testing.T) {
	for _, c := range []DeadmanCommand{
		{TTL: 30 * time.Second, Renew: "/tmp/wirelab-x/deadman.renew", Undo: "/tmp/wirelab-x/deadman.undo", DelayerPid: "/run/wirelab-delayer-eth0.pid"},
		{TTL: 90 * time.Minute, Renew: "/r", Undo: "/u"},
	} {
		argv := c.Argv("/tmp/wirelab-x/wirelab")
		got, err := parseDeadman(argv[3:])
		if err != nil || got != c || strings.Join(argv[:3], " ") != "/tmp/wirelab-x/wirelab agent deadman" {
			t.Errorf("%q parses to %+v, %v; want %+v", argv, got, err, c)
		}
	}
	if _, err := parseDeadman([]string{"--ttl", "1s"}); err == nil || !strings.Contains(err.Error(), "--ttl, --renew and --undo are required") {
		t.Errorf("without --renew and --undo: %v", err)
	}
}

// An undo file with anything but tc, ip and iptables is refused before the switch arms.
func TestDeadmanCommandRefusesABadUndoFile(t *testing.T) {
	dir := t.TempDir()
	undo := filepath.Join(dir, "undo")
	if err := os.WriteFile(undo, []byte("rm -rf /\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := DeadmanCommand{TTL: time.Second, Renew: filepath.Join(dir, "renew"), Undo: undo}
	if err := c.Run(context.Background(), nil, nil); err == nil || !strings.Contains(err.Error(), "only tc, ip and iptables commands") {
		t.Errorf("Run: %v", err)
	}
}

func TestCheckDeadmanTTL(t *testing.T) {
	for _, d := range []time.Duration{MinDeadmanTTL, DefaultDeadmanTTL, MaxDeadmanTTL} {
		if err := CheckDeadmanTTL(d); err != nil {
			t.Errorf("%s: %v", d, err)
		}
	}
	for _, d := range []time.Duration{time.Second, 2 * time.Hour} {
		if err := CheckDeadmanTTL(d); err == nil || !strings.Contains(err.Error(), "want 3s..1h, e.g. 30s") {
			t.Errorf("%s: %v", d, err)
		}
	}
}
