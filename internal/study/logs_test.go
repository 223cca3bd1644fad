package study

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/wirelab/wirelab/internal/lab"
)

// dirBackend gives each host its own directory and runs Exec here, as a remote host's
// shell would; shared puts every host in one directory, as the lab does.
type dirBackend struct {
	Backend
	dirs   map[string]string
	shared string
	fail   string // Exec on this host fails
}

func (b *dirBackend) Dir(host string) string {
	if b.shared != "" {
		return b.shared
	}
	return b.dirs[host]
}

func (b *dirBackend) Exec(ctx context.Context, host string, argv ...string) ([]byte, error) {
	if host == b.fail {
		return nil, errors.New("connection lost")
	}
	return exec.CommandContext(ctx, argv[0], argv[1:]...).Output()
}

func (b *dirBackend) Clients() []ClientHost {
	return []ClientHost{{Role: lab.Client, Name: "c1"}, {Role: ClientRole(1), Name: "c2"}}
}

func writeLog(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readKept(t *testing.T, dir string) map[string]string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		got[e.Name()] = string(b)
	}
	return got
}

// The tunnel ends' logs are copied into the results directory: the exit's from the server
// host, each client's entry (a Fleet's second client under its own name); a host without
// the log adds nothing, and a host whose shell fails is reported without losing the rest.
func TestKeepTunnelLogs(t *testing.T) {
	b := &dirBackend{dirs: map[string]string{lab.Server: t.TempDir(), lab.Client: t.TempDir(), ClientRole(1): t.TempDir(), lab.Replica: t.TempDir()}}
	writeLog(t, b.dirs[lab.Server], "tunnel-exit.log", "exit: level=7\n")
	writeLog(t, b.dirs[lab.Client], "tunnel-entry.log", "entry 1\n")
	writeLog(t, b.dirs[ClientRole(1)], "tunnel-entry.log", "entry 2\n")
	writeLog(t, b.dirs[lab.Server], "socat.log", "not a tunnel log\n")
	out := filepath.Join(t.TempDir(), "results")
	if err := keepLogs(context.Background(), b, tunnelLogs(logHosts(b, []string{lab.Client})), out); err != nil {
		t.Fatal(err)
	}
	got := readKept(t, out)
	want := map[string]string{"tunnel-exit.log": "exit: level=7\n", "tunnel-entry.log": "entry 1\n", "tunnel-entry-client2.log": "entry 2\n"}
	if len(got) != len(want) {
		t.Fatalf("kept %v, want %v", got, want)
	}
	for f, text := range want {
		if got[f] != text {
			t.Errorf("%s = %q, want %q (kept %v)", f, got[f], text, got)
		}
	}

	// One directory for every host (the lab): each log once, under its own name.
	shared := &dirBackend{shared: t.TempDir()}
	writeLog(t, shared.shared, "tunnel-exit.log", "exit\n")
	writeLog(t, shared.shared, "tunnel-entry.log", "entry\n")
	out = t.TempDir()
	if err := keepLogs(context.Background(), shared, tunnelLogs([]string{lab.Replica}), out); err != nil {
		t.Fatal(err)
	}
	if got := readKept(t, out); len(got) != 2 || got["tunnel-exit.log"] != "exit\n" || got["tunnel-entry.log"] != "entry\n" {
		t.Errorf("lab layout kept %v, want the exit's and the entry's log once each", got)
	}

	// An existing server: the backend has no directory on its machine (Dir ""), so only
	// the entry's log is looked for.
	existing := &dirBackend{dirs: map[string]string{lab.Client: b.dirs[lab.Client]}, fail: lab.Server}
	out = t.TempDir()
	if err := keepLogs(context.Background(), existing, tunnelLogs([]string{lab.Client}), out); err != nil {
		t.Fatalf("with an existing server: %v", err)
	}
	if got := readKept(t, out); len(got) != 1 || got["tunnel-entry.log"] != "entry 1\n" {
		t.Errorf("with an existing server kept %v, want the entry's log only", got)
	}

	// No tunnel ran: nothing kept, no directory made.
	none := filepath.Join(t.TempDir(), "results")
	if err := keepLogs(context.Background(), &dirBackend{shared: t.TempDir()}, tunnelLogs([]string{lab.Client}), none); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(none); !os.IsNotExist(err) {
		t.Errorf("without tunnel logs the results directory was made (%v)", err)
	}

	// The server's shell fails: the error names it and the entry's log is still kept.
	b.fail = lab.Server
	out = t.TempDir()
	err := keepLogs(context.Background(), b, tunnelLogs([]string{lab.Client}), out)
	if err == nil {
		t.Fatal("a failed read of the exit's log was not reported")
	}
	if got := readKept(t, out); got["tunnel-entry.log"] != "entry 1\n" || got["tunnel-exit.log"] != "" {
		t.Errorf("with the server unreachable kept %v, want the entry's log only", got)
	}
}
