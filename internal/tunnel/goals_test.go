package tunnel

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// docs/tunnel.md quotes every goal's row as `wirelab tunnel goals` prints it, so a goal
// changed here without it fails.
func TestDocsQuoteEveryGoal(t *testing.T) {
	for _, doc := range []string{"docs/tunnel.md"} {
		b, err := os.ReadFile(filepath.Join("..", "..", doc))
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range Goals() {
			if !strings.Contains(string(b), g.Row()) {
				t.Errorf("%s does not quote goal %s as `wirelab tunnel goals` prints it:\n%s", doc, g.Key, g.Row())
			}
		}
	}
}

func TestBound(t *testing.T) {
	for _, c := range []struct {
		g    Goal
		want string
	}{
		{Goal{AtLeast: true, Value: 1, Unit: "×"}, "≥ 1.0×"},
		{Goal{AtLeast: true, Value: 2.5, Unit: "×"}, "≥ 2.5×"},
		{Goal{Value: 0.3, Unit: "×"}, "≤ 0.30×"},
		{Goal{Value: 1, Unit: " s"}, "≤ 1.0 s"},
	} {
		if got := c.g.Bound(); got != c.want {
			t.Errorf("Bound(%+v) = %q, want %q", c.g, got, c.want)
		}
	}
}
