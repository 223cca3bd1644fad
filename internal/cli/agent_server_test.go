package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirelab/wirelab/internal/remote"
)

// Bad flags are usage errors (the messages are remote.AgentFlags': remote/agent_test.go).
func TestAgentServerFlags(t *testing.T) {
	for _, tool := range []string{"mariadb", "postgres"} {
		for _, args := range [][]string{
			{},
			{"--dir", "rel/dir", "--bind", "198.18.0.2"},
			{"--dir", "/tmp/x", "--bind", "198.18.0.2", "--port", "70000"},
		} {
			p, _, e, _ := testProcess(t, true)
			argv := append([]string{"agent", tool}, args...)
			if code := Main(argv, p); code != 2 {
				t.Errorf("%q: exit %d, want 2 (%s)", argv, code, e.String())
			}
		}
	}
}

// A start that fails exits 1 with the error, which the agent also left in server.json.
func TestAgentServerStartFailure(t *testing.T) {
	dir := filepath.Join(t.TempDir(), strings.Repeat("d", 110))
	p, _, e, _ := testProcess(t, true)
	if code := Main([]string{"agent", "mariadb", "--dir", dir, "--bind", "198.18.0.2"}, p); code != 1 || !strings.Contains(e.String(), "socket path") {
		t.Fatalf("exit %d, want 1: %s", code, e.String())
	}
	if _, err := os.Stat(filepath.Join(dir, remote.StateFile)); err != nil {
		t.Error(err)
	}
}
