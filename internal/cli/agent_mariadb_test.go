package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirelab/wirelab/internal/remote"
)

func TestAgentMariaDBFlags(t *testing.T) {
	for _, args := range [][]string{
		{"agent", "mariadb"},
		{"agent", "mariadb", "--dir", "/tmp/x"},
		{"agent", "mariadb", "--dir", "rel/dir", "--bind", "198.18.0.2"},
		{"agent", "mariadb", "--dir", "/tmp/x", "--bind", "198.18.0.2", "--for", "0s"},
	} {
		p, _, e, _ := testProcess(t, true)
		if code := Main(args, p); code != 2 {
			t.Errorf("%q: exit %d, want 2 (%s)", args, code, e.String())
		}
	}
}

// A start that fails leaves the error in server.json, mode 0600, for the caller to show.
func TestAgentMariaDBStartFailureWritesTheError(t *testing.T) {
	// A socket path longer than sun_path fails before anything is created or started.
	dir := filepath.Join(t.TempDir(), strings.Repeat("d", 110))
	p, _, e, _ := testProcess(t, true)
	if code := Main([]string{"agent", "mariadb", "--dir", dir, "--bind", "198.18.0.2"}, p); code != 1 {
		t.Fatalf("exit %d, want 1: %s", code, e.String())
	}
	b, err := os.ReadFile(filepath.Join(dir, remote.StateFile))
	if err != nil {
		t.Fatal(err)
	}
	_, perr := remote.ParseState(b)
	if perr == nil || !strings.Contains(perr.Error(), "socket path") || !strings.Contains(e.String(), "socket path") {
		t.Errorf("state %s: %v; stderr %q", b, perr, e.String())
	}
	if fi, err := os.Stat(filepath.Join(dir, remote.StateFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("state file mode: %v, %v", fi.Mode(), err)
	}
}
