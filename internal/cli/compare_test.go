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
		{"plain vs compression", []string{fixtures + "quick-20mbit", fixtures + "quick-20mbit-compression"}, 0, "+83.1% [+79.7% … +83.1%] (p=0.011 n=5s+5s)", ""},
		{"flags after the directories", []string{fixtures + "quick-20mbit", fixtures + "quick-20mbit-compression", "--format", "json"}, 0, `"significant": true`, ""},
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
