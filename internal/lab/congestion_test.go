package lab

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirelab/wirelab/internal/execx"
	"github.com/wirelab/wirelab/internal/procfs"
)

func TestCheckCongestionNamesWhatTheKernelHas(t *testing.T) {
	proc := kernelFiles(t, "reno bbr cubic", "bbr")
	for _, ok := range []string{"", "kernel", "cubic", "bbr"} {
		if err := CheckCongestion(proc, ok); err != nil {
			t.Errorf("CheckCongestion(%q): %v", ok, err)
		}
	}
	err := CheckCongestion(proc, "vegas")
	if err == nil || !strings.Contains(err.Error(), "--tcp-congestion") || !strings.Contains(err.Error(), "reno, bbr, cubic") {
		t.Errorf("CheckCongestion(vegas) = %v; want a refusal naming the flag and what the kernel has", err)
	}
}

// kernelFiles is a /proc whose kernel has the congestion controls available and the
// default def.
func kernelFiles(t *testing.T, available, def string) procfs.FS {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "sys", "net", "ipv4")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"tcp_available_congestion_control": available, "tcp_congestion_control": def} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return procfs.At(root)
}

func TestResolveCongestion(t *testing.T) {
	proc := kernelFiles(t, "reno bbr cubic", "bbr")
	for asked, want := range map[string]string{"": "cubic", "kernel": "bbr", "bbr": "bbr", "reno": "reno", "cubic": "cubic"} {
		got, err := ResolveCongestion(proc, asked)
		if err != nil || got != want {
			t.Errorf("ResolveCongestion(%q) = %q, %v; want %q", asked, got, err, want)
		}
	}
	if _, err := ResolveCongestion(proc, "vegas"); err == nil || !strings.Contains(err.Error(), "--tcp-congestion") {
		t.Errorf("ResolveCongestion(vegas) = %v; want a refusal naming the flag", err)
	}
}

func TestResolveCongestionWithoutCubicTakesTheKernelDefault(t *testing.T) {
	proc := kernelFiles(t, "reno bbr", "bbr")
	if got, err := ResolveCongestion(proc, ""); err != nil || got != "bbr" {
		t.Errorf("ResolveCongestion(\"\") without cubic = %q, %v; want the kernel's default bbr", got, err)
	}
}

func TestCongestionOfALabThatSetNoneIsTheKernelDefault(t *testing.T) {
	l := &Lab{State: &State{}, proc: kernelFiles(t, "reno bbr cubic", "bbr")}
	if got := l.Congestion(); got != "bbr" {
		t.Errorf("Congestion of a lab that set none = %q; want the kernel's default bbr", got)
	}
	l.State.Congestion = "cubic"
	if got := l.Congestion(); got != "cubic" {
		t.Errorf("Congestion of a lab that set cubic = %q", got)
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
