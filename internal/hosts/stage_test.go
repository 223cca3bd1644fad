package hosts

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestStageCopiesTheBinary(t *testing.T) {
	self := filepath.Join(t.TempDir(), "wirelab")
	if err := os.WriteFile(self, []byte("ELF..."), 0o755); err != nil {
		t.Fatal(err)
	}
	h := newFakeHost()
	h.Answer = map[string]string{"uname -m": unameArch[runtime.GOARCH][0] + "\n", "mktemp": "/tmp/wirelab-abc123\n"}
	s, err := Stage(context.Background(), h, self)
	if err != nil {
		t.Fatal(err)
	}
	if s.Agent != "/tmp/wirelab-abc123/wirelab" || h.files[s.Agent] != "ELF..." {
		t.Errorf("staged %+v, files %v", s, h.files)
	}
	if err := Unstage(context.Background(), h, s); err != nil {
		t.Fatal(err)
	}
	if l := h.lines(); l[len(l)-1] != "rm -rf -- /tmp/wirelab-abc123" {
		t.Errorf("unstage ran %q", l[len(l)-1])
	}
	if err := Unstage(context.Background(), h, Staged{Dir: "/"}); err == nil {
		t.Error("unstage of / must be refused")
	}
}

func TestStageRefusesAnotherArch(t *testing.T) {
	h := newFakeHost()
	h.Answer = map[string]string{"uname -m": "sparc64\n"}
	_, err := Stage(context.Background(), h, "/nonexistent")
	if err == nil || !strings.Contains(err.Error(), "host client1: is sparc64") {
		t.Errorf("want a refusal naming the host and its arch, got %v", err)
	}
	if strings.Contains(strings.Join(h.lines(), "\n"), "mktemp") {
		t.Error("nothing may be made on a host that is refused")
	}
}
