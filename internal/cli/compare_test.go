package cli

import (
	"bytes"
	"strings"
	"testing"
)

func compareProcess() (*Process, *bytes.Buffer, *bytes.Buffer) {
	var out, errb bytes.Buffer
	return &Process{Stdout: &out, Stderr: &errb}, &out, &errb
}

const fixtures = "../compare/testdata/"

func TestCompareCommand(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		code    int
		stdout  string // in stdout; "" = stdout must be empty
		message string // in stderr
	}{
		{"plain vs compression, 5 s points", []string{fixtures + "quick-20mbit", fixtures + "quick-20mbit-compression"}, 0, "~ +83.4% (2+2 batches of 2 s: a test needs 4 a side)", ""},
		{"repeats", []string{fixtures + "hand-repeats-a", fixtures + "hand-repeats-b"}, 0, "better +80.6% [+79.7% … +81.8%] (p=0.008, 5+5 repeats)", ""},
		{"one run a side", []string{fixtures + "hand-once-a", fixtures + "hand-once-b"}, 0, "worse -9.9% [-10.8% … -8.9%] (p<0.001, 10+10 batches of 2 s)", ""},
		{"margin given", []string{"--margin", "12%", fixtures + "hand-once-a", fixtures + "hand-once-b"}, 0, "~ -9.9% [-10.8% … -8.9%] (p<0.001, 10+10 batches of 2 s, within ±12%)", ""},
		{"legend names the recorded margin", []string{fixtures + "hand-once-a", fixtures + "hand-once-b"}, 0, "beyond ±5% (default (not measured on this machine", "compare: a change is called only beyond the margin, ±5% default"},
		{"legend names --margin", []string{"--margin", "7%", fixtures + "hand-once-a", fixtures + "hand-once-b"}, 0, "beyond ±7% (from --margin)", "beyond the margin, ±7% from --margin"},
		{"flags after the directories", []string{fixtures + "hand-once-a", fixtures + "hand-once-b", "--format", "json"}, 0, `"verdict": "worse"`, ""},
		{"repeats against batches", []string{fixtures + "hand-repeats-a", fixtures + "hand-once-a"}, 1, "", "hand-repeats-a has 5 repeats, " + fixtures + "hand-once-a has one run's 10 batch means of 2 s: compare like with like"},
		{"bad format", []string{"--format", "xml", fixtures + "quick-20mbit", fixtures + "quick-20mbit"}, 2, "", "--format: unknown format \"xml\": want one of text, md, html, json"},
		{"bad margin", []string{"--margin", "5", fixtures + "quick-20mbit", fixtures + "quick-20mbit"}, 2, "", "--margin \"5\": want a percentage"},
		{"one directory", []string{fixtures + "quick-20mbit"}, 2, "", "want two or more directories"},
		{"mismatch", []string{fixtures + "quick-20mbit", fixtures + "quick-unlimited"}, 1, "", "link_rate_bps (20mbit vs unlimited)"},
		{"missing results", []string{fixtures + "quick-20mbit", fixtures + "nonexistent"}, 1, "", "compare " + fixtures + "nonexistent: read results"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, out, errb := compareProcess()
			code := Main(append([]string{"compare"}, tc.args...), p)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, out, errb)
			}
			if tc.stdout == "" && out.Len() > 0 {
				t.Errorf("printed before refusing:\n%s", out)
			}
			if !strings.Contains(out.String(), tc.stdout) || !strings.Contains(errb.String(), tc.message) {
				t.Errorf("stdout:\n%s\nstderr:\n%s\nwant %q / %q", out, errb, tc.stdout, tc.message)
			}
		})
	}
}
