package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/replication"
)

func TestStudyReplicationBadInput(t *testing.T) {
	unwritable := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(unwritable, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--channels", "native,carrier-pigeon"}, "--channels"},
		{[]string{"--channels", "tunnel,tunnel"}, "appears twice"},
		{[]string{"--channels", ""}, "--channels is empty"},
		{[]string{"--scenarios", "1,5"}, "--scenarios"},
		{[]string{"--scenarios", "2,2"}, "appears twice"},
		{[]string{"--rate-cap", "2furlongs"}, "--rate"},
		{[]string{"--rate", "2furlongs"}, "--rate"},
		{[]string{"--precision", "0"}, "--precision"},
		{[]string{"--precision", "lots"}, "--precision"},
		{[]string{"--delay", "125ms", "--rtt", "250ms"}, "--delay and --rtt"},
		{[]string{"--rtt", "-1s"}, "--rtt"},
		{[]string{"--rtts", "0,fast"}, "--rtts"},
		{[]string{"--loads", "300,lots"}, "--loads"},
		{[]string{"--qps", "0"}, "--qps"},
		{[]string{"--duration", "2s"}, "--duration"},
		{[]string{"--search-factor", "1"}, "--search-factor"},
		{[]string{"--tables", "0"}, "--tables"},
		{[]string{"--tunnel-compress", "gzip"}, "--tunnel-compress"},
		{[]string{"--shaper", "magic"}, "--shaper"},
		{[]string{"--fault-for", "1m"}, "--fault-at"},
		{[]string{"--out", filepath.Join(unwritable, "sub")}, "--out"},
		{[]string{"extra"}, "unexpected argument"},
		{[]string{"--engine", "mysql"}, "--engine"},
		{[]string{"--engine", "postgres", "--channels", "native-compressed"}, "--channels"},
		{[]string{"--engine", "postgres", "--channels", "native,native-compressed,tunnel"}, "no compression"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			p, _, errb, f := testProcess(t, true)
			code := Main(append([]string{"study", "replication"}, c.args...), p)
			if code != 2 {
				t.Errorf("exit %d, want 2 (usage); stderr: %s", code, errb)
			}
			if !strings.Contains(errb.String(), c.want) {
				t.Errorf("stderr %q does not name %q", errb.String(), c.want)
			}
			if len(f.Calls) > 0 {
				t.Errorf("bad input ran commands: %v", f.Calls)
			}
		})
	}
}

func TestStudyReplicationQuickDefaults(t *testing.T) {
	fs := newFlagSet(&Process{Stderr: os.Stderr}, "x", "", "")
	f := addReplicationFlags(fs)
	if err := fs.Parse([]string{"--out", t.TempDir(), "--rtt", "100ms"}); err != nil {
		t.Fatal(err)
	}
	o, err := f.options()
	if err != nil {
		t.Fatal(err)
	}
	if o.Link.Delay != 50*time.Millisecond || o.Link.RateBps != 2_000_000 || len(o.Channels) != 3 || len(o.RTTs) != 5 ||
		o.RTTs[0] != 0 || o.Precision != 0.05 || o.Tunnel.Compress != "zstd" {
		t.Fatalf("options %+v", o)
	}
	// --quick fills what was not given and leaves what was.
	fs = newFlagSet(&Process{Stderr: os.Stderr}, "x", "", "")
	f = addReplicationFlags(fs)
	if err := fs.Parse([]string{"--quick", "--duration", "30s", "--rate-cap", "1mbit"}); err != nil {
		t.Fatal(err)
	}
	if err := applyQuick(fs, *f.quick, replicationQuick); err != nil {
		t.Fatal(err)
	}
	if o, err = f.options(); err != nil {
		t.Fatal(err)
	}
	if o.Duration != 30*time.Second || o.SearchDuration != 20*time.Second || len(o.RTTs) != 3 || o.CheckWire ||
		o.Link.RateBps != 1_000_000 || o.Link.Delay != 125*time.Millisecond {
		t.Fatalf("quick options %+v", o)
	}
}

func TestStudyReplicationEngineChannels(t *testing.T) {
	cases := []struct {
		args []string
		kind engine.Kind
		want []replication.Channel
	}{
		{nil, engine.MariaDB, []replication.Channel{replication.Native, replication.NativeCompressed, replication.Tunnel}},
		{[]string{"--engine", "postgres"}, engine.Postgres, []replication.Channel{replication.Native, replication.Tunnel}},
		{[]string{"--engine", "postgres", "--channels", "tunnel"}, engine.Postgres, []replication.Channel{replication.Tunnel}},
		{[]string{"--engine", "mariadb", "--channels", "native-compressed"}, engine.MariaDB, []replication.Channel{replication.NativeCompressed}},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			fs := newFlagSet(&Process{Stderr: os.Stderr}, "x", "", "")
			f := addReplicationFlags(fs)
			if err := fs.Parse(c.args); err != nil {
				t.Fatal(err)
			}
			o, err := f.options()
			if err != nil {
				t.Fatal(err)
			}
			if o.Engine != c.kind || !slices.Equal(o.Channels, c.want) {
				t.Errorf("engine %s channels %v; want %s %v", o.Engine, o.Channels, c.kind, c.want)
			}
		})
	}
}
