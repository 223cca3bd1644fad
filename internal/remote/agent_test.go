package remote

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/engine"
)

// parseAgent parses argv (from `agent`'s tool on) as `wirelab agent <engine>` does.
func parseAgent(t *testing.T, argv []string) (ServerOptions, error) {
	t.Helper()
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := AddAgentFlags(fs, engine.Kind(argv[0]))
	if err := fs.Parse(argv[1:]); err != nil {
		return ServerOptions{}, err
	}
	return f.Options()
}

// What Start renders, the agent parses back to the same server.
func TestAgentArgvRoundTrip(t *testing.T) {
	for _, o := range []ServerOptions{
		{Engine: engine.MariaDB, Dir: "/tmp/wirelab-x/mariadb", Bind: "198.18.21.2,127.0.0.1", Port: 3306, BufferPool: "128M",
			ServerID: 2, LogBin: true, Extra: map[string]string{"slave_net_timeout": "10", "a": "b=c"}, For: 4 * time.Hour},
		{Engine: engine.Postgres, Dir: "/tmp/wirelab-x/postgres", Bind: "198.18.21.2", Port: 15432, BufferPool: "1G", For: time.Minute},
	} {
		o.Agent = "/tmp/wirelab-x/wirelab"
		argv := o.AgentArgv()
		if argv[0] != o.Agent || argv[1] != "agent" {
			t.Fatalf("argv %q", argv)
		}
		got, err := parseAgent(t, argv[2:])
		if err != nil {
			t.Fatalf("%q: %v", argv, err)
		}
		got.Agent = o.Agent
		if !reflect.DeepEqual(got, o) {
			t.Errorf("%q parses to\n %+v\nwant\n %+v", argv, got, o)
		}
	}
}

func TestAgentFlagErrors(t *testing.T) {
	for _, c := range []struct {
		argv []string
		want string
	}{
		{[]string{"mariadb"}, "agent mariadb: --dir (an absolute path), --bind and a positive --for are required"},
		{[]string{"postgres", "--dir", "rel/dir", "--bind", "198.18.0.2"}, "--dir (an absolute path)"},
		{[]string{"mariadb", "--dir", "/tmp/x", "--bind", "198.18.0.2", "--for", "0s"}, "a positive --for"},
		{[]string{"postgres", "--dir", "/tmp/x", "--bind", "198.18.0.2", "--port", "70000"}, "agent postgres: --port 70000: want 1..65535"},
		{[]string{"mariadb", "--dir", "/tmp/x", "--bind", "198.18.0.2", "--buffer-pool", "1GB"}, `agent mariadb: --buffer-pool "1GB"`},
		{[]string{"mariadb", "--dir", "/tmp/x", "--bind", "198.18.0.2", "--set", "novalue"}, `want name=value, got "novalue"`},
	} {
		if _, err := parseAgent(t, c.argv); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.argv, err, c.want)
		}
	}
	o, err := parseAgent(t, []string{"postgres", "--dir", "/tmp/x", "--bind", "198.18.0.2"})
	if err != nil || o.Port != PostgresPort || o.BufferPool != DefaultAgentBufferPool || o.For != DefaultFor {
		t.Errorf("defaults: %+v, %v; want the engine's port, %s and %s", o, err, DefaultAgentBufferPool, DefaultFor)
	}
}

// A start that fails leaves the error in server.json, mode 0600, for the caller to show.
func TestServeStartFailureWritesTheError(t *testing.T) {
	for _, kind := range []engine.Kind{engine.MariaDB, engine.Postgres} {
		t.Run(string(kind), func(t *testing.T) {
			// A socket path longer than sun_path fails before anything is created or started.
			dir := filepath.Join(t.TempDir(), strings.Repeat("d", 110))
			o := ServerOptions{Engine: kind, Dir: dir, Bind: "198.18.0.2", Port: Port(kind), BufferPool: "1G", For: time.Minute}
			err := Serve(context.Background(), o, slog.New(slog.DiscardHandler))
			if err == nil || !strings.Contains(err.Error(), "socket path") {
				t.Fatalf("Serve: %v, want a socket path error", err)
			}
			b, err := os.ReadFile(filepath.Join(dir, StateFile))
			if err != nil {
				t.Fatal(err)
			}
			_, perr := ParseState(b)
			if perr == nil || !strings.Contains(perr.Error(), "socket path") || !strings.Contains(perr.Error(), "agent "+string(kind)) {
				t.Errorf("state %s: %v", b, perr)
			}
			if fi, err := os.Stat(filepath.Join(dir, StateFile)); err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("state file mode: %v, %v", fi.Mode(), err)
			}
		})
	}
}
