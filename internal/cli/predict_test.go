package cli

import (
	"strings"
	"testing"
)

// predict is wired: a bad flag is a usage error with the usage shown, a good one runs
// (internal/predict tests what it prints).
func TestPredictCommand(t *testing.T) {
	assertUsage(t, []string{"predict", "--rate", "1gbit"}, "--from is required")
	assertUsage(t, []string{"predict", "--from", "x", "--against", "y", "--rate", "1gbit"}, "so --rate would be ignored")
	p, out, errb, _ := testProcess(t, true)
	if code := Main([]string{"predict", "--from", "../model/testdata/quick", "--threads", "8", "--json"}, p); code != 0 ||
		!strings.Contains(out.String(), `"profile": "plain"`) {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
}
