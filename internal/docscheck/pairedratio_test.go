package docscheck

import (
	"fmt"
	"math"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/wirelab/wirelab/internal/stats"
)

// scripts/paired-ratio.awk, which bench-tunnel.sh's metrics part reports its ratio with, is
// the geometric mean of the rounds' ratios with stats.CI95's interval on their logs: the
// interval every other figure of wirelab has, for 2, 8 and 40 rounds (the table and the
// expansion above 30 degrees of freedom). A round with a figure at 0 is left out; one
// round has no interval.
func TestPairedRatioScript(t *testing.T) {
	rounds := map[string][][2]float64{
		"two":   {{1.02, 1.00}, {1.00, 1.00}},
		"eight": {{1.02, 1.0}, {0.99, 1.0}, {1.05, 1.01}, {0.7, 0.69}, {1.5, 1.49}, {2.0, 1.97}, {1.0, 1.02}, {0.3, 0.3}},
		"one":   {{1.5, 1.0}, {0, 1.0}},
	}
	var forty [][2]float64
	for i := range 40 {
		forty = append(forty, [2]float64{1 + 0.02*float64(i%7), 1 + 0.01*float64(i%5)})
	}
	rounds["forty"] = forty
	var in strings.Builder
	for name, rs := range rounds {
		for _, r := range rs {
			fmt.Fprintf(&in, "%s %g %g\n", name, r[0], r[1])
		}
	}
	cmd := exec.Command("awk", "-f", filepath.Join(root, "scripts/paired-ratio.awk"))
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("paired-ratio.awk: %v", err)
	}
	got := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "|")
		got[f[0]] = f[1:]
	}
	for name, rs := range rounds {
		var logs []float64
		for _, r := range rs {
			if r[0] > 0 && r[1] > 0 {
				logs = append(logs, math.Log(r[0]/r[1]))
			}
		}
		m, h := stats.CI95(logs)
		want := []float64{math.Exp(m), math.Exp(m - h), math.Exp(m + h), float64(len(logs))}
		g := got[name]
		if len(g) != 4 {
			t.Errorf("%s: output %q", name, g)
			continue
		}
		for i, w := range want {
			if len(logs) < 2 && (i == 1 || i == 2) {
				if g[i] != "-" {
					t.Errorf("%s: one round, interval %q, want -", name, g[i])
				}
				continue
			}
			v, err := strconv.ParseFloat(g[i], 64)
			if err != nil || math.Abs(v-w) > 6e-5 {
				t.Errorf("%s: field %d = %q, want %.5f (stats.CI95 on the log ratios)", name, i+1, g[i], w)
			}
		}
	}
}
