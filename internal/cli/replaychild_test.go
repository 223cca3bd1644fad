package cli

import (
	"strings"
	"testing"
)

// The hidden replayer command reads its flags through the replay package: a bad one is a
// usage error naming it, before anything opens.
func TestReplayChildRefusesBadFlags(t *testing.T) {
	p, _, stderr, _ := testProcess(t, false)
	code := Main([]string{"__replay", "--log", "x.log", "--format", "mysql-general", "--engine", "mariadb",
		"--host", "127.0.0.1", "--port", "3306", "--user", "u", "--speed", "fast"}, p)
	if code != 2 || !strings.Contains(stderr.String(), `--speed "fast"`) {
		t.Errorf("exit %d, stderr %q; want 2 and the --speed named", code, stderr.String())
	}
}
