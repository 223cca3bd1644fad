package e2e

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Two labs at once: separate namespaces, the same lab addresses, no collision; commands
// without --lab refuse to guess.
func TestTwoLabsAtOnce(t *testing.T) {
	skipUnlessRoot(t)
	state := t.TempDir()
	var ids []string
	for i := 0; i < 2; i++ {
		out := wl(t, state, "up", "--no-db", "--rate", "100mbit")
		id := ""
		for _, f := range strings.Fields(out) {
			if strings.HasPrefix(f, "wl-") && strings.HasSuffix(f, "-client") {
				id = strings.TrimSuffix(strings.TrimPrefix(f, "wl-"), "-client")
			}
		}
		if id == "" {
			t.Fatalf("no run id in up output:\n%s", out)
		}
		ids = append(ids, id)
		t.Cleanup(func() { wl(t, state, "down", "--lab", id); assertGone(t, id) })
	}
	if ids[0] == ids[1] {
		t.Fatalf("two labs got one id %s", ids[0])
	}
	cmd := exec.Command(bin, "status")
	cmd.Env = append(os.Environ(), "WIRELAB_STATE_DIR="+state)
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "--lab") {
		t.Errorf("status with two labs should ask for --lab; got %v:\n%s", err, out)
	}
	for _, id := range ids {
		reaches(t, state, id)
	}
	wl(t, state, "down", "--lab", ids[0])
	assertGone(t, ids[0])
	reaches(t, state, ids[1])
}

// reaches checks that lab id's client gets an answer from 198.18.0.2 across the wire: a
// TCP connect to a closed port is refused by the server host (a reset came back), where a
// broken wire would time out or find no route.
func reaches(t *testing.T, state, id string) {
	t.Helper()
	cmd := exec.Command(bin, "exec", "--lab", id, "client", "--", "timeout", "5", "bash", "-c", "exec 3<>/dev/tcp/198.18.0.2/9")
	cmd.Env = append(os.Environ(), "WIRELAB_STATE_DIR="+state)
	out, _ := cmd.CombinedOutput()
	if !strings.Contains(string(out), "Connection refused") {
		t.Errorf("lab %s: client did not reach the server host: %s", id, out)
	}
}
