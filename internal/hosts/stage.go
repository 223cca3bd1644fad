package hosts

import (
	"context"
	"fmt"
	"os"
	"path"
	"runtime"
	"strings"
)

// Staged is wirelab's directory on a host and its own binary there.
type Staged struct {
	Dir   string // a fresh directory under the host's /tmp, removed by Unstage
	Agent string // the wirelab binary copied into Dir
}

// unameArch maps Go's architecture names to `uname -m`'s.
var unameArch = map[string][]string{
	"amd64": {"x86_64"}, "arm64": {"aarch64", "arm64"}, "386": {"i386", "i686"},
	"arm": {"armv7l", "armv6l"}, "ppc64le": {"ppc64le"}, "s390x": {"s390x"}, "riscv64": {"riscv64"},
}

// Stage makes a directory for wirelab on h and copies self (this wirelab binary) into it,
// as roachprod does with its binary, so `wirelab agent` runs there. A host of another CPU
// architecture is refused before anything is copied.
func Stage(ctx context.Context, h Host, self string) (Staged, error) {
	out, err := h.Run(ctx, "uname", "-m")
	if err != nil {
		return Staged{}, fmt.Errorf("stage wirelab: %w", err)
	}
	arch := strings.TrimSpace(string(out))
	ok := false
	for _, a := range unameArch[runtime.GOARCH] {
		ok = ok || a == arch
	}
	if !ok && arch != "" { // DryHost answers nothing
		return Staged{}, fmt.Errorf("host %s: is %s, this wirelab is built for %s: build one with GOARCH for it", h.Name(), arch, runtime.GOARCH)
	}
	out, err = h.Run(ctx, "mktemp", "-d", "/tmp/wirelab-XXXXXX")
	if err != nil {
		return Staged{}, fmt.Errorf("stage wirelab: %w", err)
	}
	s := Staged{Dir: strings.TrimSpace(string(out))}
	if s.Dir == "" {
		s.Dir = "/tmp/wirelab-XXXXXX"
	}
	s.Agent = path.Join(s.Dir, "wirelab")
	f, err := os.Open(self)
	if err != nil {
		return s, fmt.Errorf("stage wirelab on %s: %w", h.Name(), err)
	}
	defer f.Close()
	if err := h.Copy(ctx, f, s.Agent, 0o755); err != nil {
		return s, fmt.Errorf("stage wirelab: %w", err)
	}
	return s, nil
}

// Unstage removes the directory Stage made. It refuses any other path, so a corrupt state
// can never make it remove something else.
func Unstage(ctx context.Context, h Host, s Staged) error {
	if !strings.HasPrefix(s.Dir, "/tmp/wirelab-") || strings.Contains(s.Dir, "..") {
		return fmt.Errorf("host %s: unstage: %q is not a wirelab directory", h.Name(), s.Dir)
	}
	if _, err := h.Run(ctx, "rm", "-rf", "--", s.Dir); err != nil {
		return fmt.Errorf("unstage wirelab: %w", err)
	}
	return nil
}
