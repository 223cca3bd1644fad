package hosts

import (
	"context"
	"os/exec"
	"strings"
	"testing"
)

func TestShellJoinRoundTrip(t *testing.T) {
	argv := []string{"printf", "%s|", "plain", "two words", "it's", `"dq"`, "$HOME", "`x`", "", "a\nb", "*"}
	out, err := exec.CommandContext(context.Background(), "sh", "-c", ShellJoin(argv)).Output()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(out), strings.Join(argv[2:], "|")+"|"; got != want {
		t.Errorf("sh split %q into %q, want %q", ShellJoin(argv), got, want)
	}
	if ShellQuote("tc") != "tc" || ShellQuote("198.18.10.2/32") != "198.18.10.2/32" {
		t.Error("safe words must stay as they are, for readable --dry-run output")
	}
}
