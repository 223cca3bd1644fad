package nstest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// NeedMariaDB ends the test (Unavailable) unless mariadbd is in PATH or /usr/sbin, where
// Debian installs it.
func NeedMariaDB(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("mariadbd"); err == nil {
		return
	}
	if _, err := os.Stat("/usr/sbin/mariadbd"); err != nil {
		Unavailable(t, "mariadbd not installed")
	}
}

// Wirelab is the wirelab binary a root test runs inside its lab (the tunnel's ends, the
// wire's delay line): $WIRELAB_BIN, else one built for the test from the module's
// ./cmd/wirelab.
func Wirelab(t testing.TB) string {
	t.Helper()
	if b := os.Getenv("WIRELAB_BIN"); b != "" {
		return b
	}
	root, err := moduleRoot()
	if err != nil {
		t.Fatalf("build wirelab: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "wirelab")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/wirelab")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build wirelab: %v\n%s", err, out)
	}
	return bin
}

// moduleRoot is the nearest directory up from the test's own that holds go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", os.ErrNotExist
		}
		dir = up
	}
}
