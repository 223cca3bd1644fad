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
	for _, ok := range []string{"", "kernel", "cubic", "bbr"} {
		if err := CheckCongestion(ok); err != nil {
			t.Errorf("CheckCongestion(%q): %v", ok, err)
		}
	}
	err := CheckCongestion("vegas")
	if err == nil || !strings.Contains(err.Error(), "--tcp-congestion") || !strings.Contains(err.Error(), "reno, bbr, cubic") {
		t.Errorf("CheckCongestion(vegas) = %v; want a refusal naming the flag and what the kernel has", err)
	}
}

// kernelFiles points the kernel's congestion files at temporary ones for one test.
func kernelFiles(t *testing.T, available, def string) {
	t.Helper()
	dir := t.TempDir()
	for path, body := range map[*string]string{&availableCongestion: available, &defaultCongestion: def} {
		old := *path
		*path = filepath.Join(dir, filepath.Base(old))
		if err := os.WriteFile(*path, []byte(body+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { *path = old })
	}
}

func TestResolveCongestion(t *testing.T) {
	kernelFiles(t, "reno bbr cubic", "bbr")
	for asked, want := range map[string]string{"": "cubic", "kernel": "bbr", "bbr": "bbr", "reno": "reno", "cubic": "cubic"} {
		got, err := ResolveCongestion(asked)
		if err != nil || got != want {
			t.Errorf("ResolveCongestion(%q) = %q, %v; want %q", asked, got, err, want)
		}
	}
	if _, err := ResolveCongestion("vegas"); err == nil || !strings.Contains(err.Error(), "--tcp-congestion") {
		t.Errorf("ResolveCongestion(vegas) = %v; want a refusal naming the flag", err)
	}
}

func TestResolveCongestionWithoutCubicTakesTheKernelDefault(t *testing.T) {
	kernelFiles(t, "reno bbr", "bbr")
	if got, err := ResolveCongestion(""); err != nil || got != "bbr" {
		t.Errorf("ResolveCongestion(\"\") without cubic = %q, %v; want the kernel's default bbr", got, err)
	}
}

func TestCongestionOfALabThatSetNoneIsTheKernelDefault(t *testing.T) {
	kernelFiles(t, "reno bbr cubic", "bbr")
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
