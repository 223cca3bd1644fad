package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/result"
)

func TestReportCommand(t *testing.T) {
	run := &result.Run{Schema: result.Schema, Study: "run", RunID: "t", Started: time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC),
		Spec: result.Spec{Threads: []int{1, 4}},
		Points: []result.Point{
			{Study: "run", Series: "20mbit", LinkRateBps: 20e6, Threads: 1, TPS: 40, Bottleneck: "latency"},
			{Study: "run", Series: "20mbit", LinkRateBps: 20e6, Threads: 4, TPS: 150, Bottleneck: "network", LinkUtilization: 0.95},
		}}
	withResults := t.TempDir()
	if err := result.Write(withResults, run); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		args      func(out string) []string
		code      int
		wantFiles bool
		stderr    string
	}{
		{"renders into DIR", func(string) []string { return []string{"report", withResults} }, 0, true, ""},
		{"renders into --out", func(out string) []string { return []string{"report", "--out", out, withResults} }, 0, true, ""},
		{"no DIR", func(string) []string { return []string{"report"} }, 2, false, "want exactly one DIR"},
		{"DIR without results", func(string) []string { return []string{"report", t.TempDir()} }, 1, false, "results.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			var stdout, stderr bytes.Buffer
			p := &Process{Stdout: &stdout, Stderr: &stderr, Getenv: func(string) string { return "" }}
			args := tc.args(out)
			if code := Main(args, p); code != tc.code {
				t.Fatalf("exit %d, want %d; stderr: %s", code, tc.code, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.stderr) {
				t.Errorf("stderr %q does not mention %q", stderr.String(), tc.stderr)
			}
			if !tc.wantFiles {
				return
			}
			dest := withResults
			if len(args) > 2 {
				dest = out
			}
			for _, f := range []string{"report.md", "report.html", "run-tps.png", "run-tps.svg"} {
				if _, err := os.Stat(filepath.Join(dest, f)); err != nil {
					t.Errorf("missing %s: %v", f, err)
				}
			}
			md, _ := os.ReadFile(filepath.Join(dest, "report.md"))
			if !strings.Contains(string(md), "| 4 | 150.0 |") {
				t.Errorf("report.md lacks the 4-thread row:\n%s", md)
			}
		})
	}
}
