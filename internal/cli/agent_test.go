package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAgentDeadmanFlagsAndUndoFile(t *testing.T) {
	p, _, _, _ := testProcess(t, true)
	if code := Main([]string{"agent"}, p); code != 2 {
		t.Errorf("agent without a tool: exit %d, want 2", code)
	}
	if code := Main([]string{"agent", "deadman", "--ttl", "1s"}, p); code != 2 {
		t.Errorf("deadman without --renew/--undo: exit %d, want 2", code)
	}
	dir := t.TempDir()
	undo := filepath.Join(dir, "undo")
	if err := os.WriteFile(undo, []byte("rm -rf /\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p2, _, e2, _ := testProcess(t, true)
	code := Main([]string{"agent", "deadman", "--ttl", "1s", "--renew", filepath.Join(dir, "renew"), "--undo", undo}, p2)
	if code != 1 || !strings.Contains(e2.String(), "only tc, ip and iptables commands") {
		t.Errorf("an undo file with rm: exit %d, %q", code, e2.String())
	}
	p3, o3, _, _ := testProcess(t, true)
	Main(nil, p3)
	if strings.Contains(o3.String(), "agent") {
		t.Errorf("agent is internal and must not be listed:\n%s", o3.String())
	}
}
