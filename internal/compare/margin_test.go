package compare

import (
	"strings"
	"testing"
)

func TestParseMargin(t *testing.T) {
	for s, want := range map[string]float64{"5%": 0.05, "0%": 0, " 1.5%": 0.015, "99%": 0.99} {
		if got, err := ParseMargin(s); err != nil || got != want {
			t.Errorf("ParseMargin(%q) = %g, %v; want %g", s, got, err, want)
		}
	}
	for _, s := range []string{"5", "100%", "-1%", "x%", ""} {
		if _, err := ParseMargin(s); err == nil || !strings.Contains(err.Error(), "want a percentage from 0% to 99%") {
			t.Errorf("ParseMargin(%q): %v", s, err)
		}
	}
}
