package nstest

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// In CI a missing tool fails the test; elsewhere it skips. The test runs itself as a
// child process, since a Fatal or Skip ends the test that calls it.
func TestUnavailableFailsInCI(t *testing.T) {
	if os.Getenv("NSTEST_CHILD") == "1" {
		Unavailable(t, "%s not installed", "frobnicator")
		return
	}
	for _, tc := range []struct {
		ci       string
		fails    bool
		wantText string
	}{
		{"true", true, "CI=true and frobnicator not installed"},
		{"", false, "frobnicator not installed"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestUnavailableFailsInCI$", "-test.v")
		cmd.Env = append(os.Environ(), "NSTEST_CHILD=1", "CI="+tc.ci)
		out, err := cmd.CombinedOutput()
		if (err != nil) != tc.fails || !strings.Contains(string(out), tc.wantText) {
			t.Errorf("CI=%q: err %v, output:\n%s", tc.ci, err, out)
		}
		if !tc.fails && !strings.Contains(string(out), "--- SKIP") {
			t.Errorf("CI=%q: not skipped:\n%s", tc.ci, out)
		}
	}
}
