package execx

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestStartInCgroupRefusesAMissingCgroup(t *testing.T) {
	cmd := exec.Command("true")
	if err := StartInCgroup(cmd, filepath.Join(t.TempDir(), "gone")); err == nil || !strings.Contains(err.Error(), "open cgroup") {
		t.Fatalf("missing cgroup: %v", err)
	}
	if cmd.Process != nil {
		t.Error("started without its cgroup")
	}
	plain := exec.Command("true")
	if err := StartInCgroup(plain, ""); err != nil {
		t.Fatal(err)
	}
	_ = plain.Wait()
}

// Once a lab's cgroup is gone (torn down), its runner still runs commands, plainly.
func TestCgroupRunnerAfterTheCgroupIsGone(t *testing.T) {
	r := OS{}.WithCgroup(filepath.Join(t.TempDir(), "gone"))
	out, err := r.Run(context.Background(), "echo", "hi")
	if err != nil || strings.TrimSpace(string(out)) != "hi" {
		t.Fatalf("Run: %q %v", out, err)
	}
}
