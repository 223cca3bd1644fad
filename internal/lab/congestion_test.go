package lab

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirelab/wirelab/internal/execx"
)

func TestCheckCongestionNamesWhatTheKernelHas(t *testing.T) {
	avail := filepath.Join(t.TempDir(), "available")
	if err := os.WriteFile(avail, []byte("reno bbr cubic\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := availableCongestion
	availableCongestion = avail
	t.Cleanup(func() { availableCongestion = old })
	for _, ok := range []string{"", "cubic", "bbr"} {
		if err := CheckCongestion(ok); err != nil {
			t.Errorf("CheckCongestion(%q): %v", ok, err)
		}
	}
	err := CheckCongestion("vegas")
	if err == nil || !strings.Contains(err.Error(), "--tcp-congestion") || !strings.Contains(err.Error(), "reno, bbr, cubic") {
		t.Errorf("CheckCongestion(vegas) = %v; want a refusal naming the flag and what the kernel has", err)
	}
}

func TestCongestionIsTheAskedOneOrTheKernelDefault(t *testing.T) {
	def := filepath.Join(t.TempDir(), "default")
	if err := os.WriteFile(def, []byte("bbr\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := defaultCongestion
	defaultCongestion = def
	t.Cleanup(func() { defaultCongestion = old })
	if got := Congestion(""); got != "bbr" {
		t.Errorf("Congestion(\"\") = %q; want the kernel's default bbr", got)
	}
	if got := Congestion("cubic"); got != "cubic" {
		t.Errorf("Congestion(cubic) = %q", got)
	}
}

func TestBuildSetsTheCongestionControlOnEveryHostsRoute(t *testing.T) {
	f := &execx.Fake{}
	dir := t.TempDir()
	st := &State{RunID: "abc123", Namespaces: map[string]string{}, WireIfaces: map[string]string{},
		Path: filepath.Join(dir, "abc123.json"), TempDir: t.TempDir(), Congestion: "cubic"}
	l := &Lab{State: st, runner: f, log: discard()}
	if err := l.build(context.Background(), []string{Client, Server}); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(f.Lines(), "\n")
	for _, want := range []string{
		"ip -n wl-abc123-client route add default via 198.18.1.1 congctl cubic",
		"ip -n wl-abc123-server route add default via 198.18.0.1 congctl cubic",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing step %q in:\n%s", want, got)
		}
	}
}
