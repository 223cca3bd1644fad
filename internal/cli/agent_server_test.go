package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirelab/wirelab/internal/remote"
)

func TestAgentServerFlags(t *testing.T) {
	for _, tool := range []string{"mariadb", "postgres"} {
		for _, args := range [][]string{
			{},
			{"--dir", "/tmp/x"},
			{"--dir", "rel/dir", "--bind", "198.18.0.2"},
			{"--dir", "/tmp/x", "--bind", "198.18.0.2", "--for", "0s"},
			{"--dir", "/tmp/x", "--bind", "198.18.0.2", "--port", "70000"},
			{"--dir", "/tmp/x", "--bind", "198.18.0.2", "--buffer-pool", "1GB"},
		} {
			p, _, e, _ := testProcess(t, true)
			argv := append([]string{"agent", tool}, args...)
			if code := Main(argv, p); code != 2 {
				t.Errorf("%q: exit %d, want 2 (%s)", argv, code, e.String())
			}
		}
	}
}

// A start that fails leaves the error in server.json, mode 0600, for the caller to show.
func TestAgentServerStartFailureWritesTheError(t *testing.T) {
	for _, tool := range []string{"mariadb", "postgres"} {
		t.Run(tool, func(t *testing.T) {
			// A socket path longer than sun_path fails before anything is created or started.
			dir := filepath.Join(t.TempDir(), strings.Repeat("d", 110))
			p, _, e, _ := testProcess(t, true)
			if code := Main([]string{"agent", tool, "--dir", dir, "--bind", "198.18.0.2"}, p); code != 1 {
				t.Fatalf("exit %d, want 1: %s", code, e.String())
			}
			b, err := os.ReadFile(filepath.Join(dir, remote.StateFile))
			if err != nil {
				t.Fatal(err)
			}
			_, perr := remote.ParseState(b)
			if perr == nil || !strings.Contains(perr.Error(), "socket path") || !strings.Contains(perr.Error(), "agent "+tool) ||
				!strings.Contains(e.String(), "socket path") {
				t.Errorf("state %s: %v; stderr %q", b, perr, e.String())
			}
			if fi, err := os.Stat(filepath.Join(dir, remote.StateFile)); err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("state file mode: %v, %v", fi.Mode(), err)
			}
		})
	}
}
