package hosts

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirelab/wirelab/internal/execx"
	"github.com/wirelab/wirelab/internal/lab"
)

func TestNSHostRunsInsideTheLabHost(t *testing.T) {
	f := &execx.Fake{Responses: map[string]string{"ip netns exec wl-abc-client cat -- /proc/net/dev": "eth0: 1 2"},
		Errors: map[string]error{"ip netns exec wl-abc-client false": errors.New("exit status 1")}}
	st := &lab.State{RunID: "abc", Namespaces: map[string]string{lab.Client: "wl-abc-client"}}
	var h Host = NS{Lab: lab.Attach(st, lab.Options{Runner: f}), Role: lab.Client}
	ctx := context.Background()
	if _, err := h.Run(ctx, "ip", "-br", "addr"); err != nil {
		t.Fatal(err)
	}
	if got, err := h.ReadFile(ctx, "/proc/net/dev"); err != nil || string(got) != "eth0: 1 2" {
		t.Errorf("ReadFile: %q, %v", got, err)
	}
	if _, err := h.Run(ctx, "false"); err == nil || !strings.HasPrefix(err.Error(), "host client: ") {
		t.Errorf("a failure must name the host: %v", err)
	}
	if got := f.Lines()[0]; got != "ip netns exec wl-abc-client ip -br addr" {
		t.Errorf("ran %q", got)
	}
	dst := filepath.Join(t.TempDir(), "f")
	if err := h.Copy(ctx, strings.NewReader("x"), dst, 0o640); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(dst); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("copied file: %v, %v", fi, err)
	}
}
