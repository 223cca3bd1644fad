// Package nstest is for root integration tests: a fresh network namespace with loopback
// up, a temp directory an unprivileged server user can reach, two SSH hosts in namespaces
// of their own (SSHPair), a server host with several client hosts bridged to it (SSHStar),
// and the skip that keeps those tests out of runs without root.
// Everything it makes is removed by t.Cleanup, and what a killed test process left by the
// next test process that makes a fixture.
package nstest

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// SkipUnlessRoot skips the test under -short (`go test -short ./...` runs no lab, so it
// may run beside a measurement) and, through Unavailable, unless it runs as root with
// every command in PATH.
func SkipUnlessRoot(t testing.TB, commands ...string) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: no root integration tests")
	}
	if os.Geteuid() != 0 {
		Unavailable(t, "needs root")
	}
	for _, c := range commands {
		if _, err := exec.LookPath(c); err != nil {
			Unavailable(t, "%s not installed", c)
		}
	}
}

// InCI reports whether the tests run in CI (CI=true, as .ci/run sets it): there the
// machine is set up for every test, so a missing tool or privilege is a broken setup.
func InCI() bool { return os.Getenv("CI") == "true" }

// Unavailable ends a test whose machine lacks what it needs: a skip on a developer's
// machine, a failure in CI, where a skip would let the test pass without running.
func Unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	if InCI() {
		t.Fatalf("CI=true and "+format+": CI runs every test, set the machine up (make deps, as root)", args...)
	}
	t.Skipf(format, args...)
}

// Netns creates a network namespace named wltest-<tag>-<pid> with only loopback up and
// deletes it when the test ends.
func Netns(t testing.TB, tag string) string {
	t.Helper()
	sweepOnce.Do(sweepStale)
	ns := fmt.Sprintf("%s%s-%d", netnsPrefix, tag, os.Getpid())
	_ = exec.Command("ip", "netns", "del", ns).Run() // a leftover of a killed run
	for _, argv := range [][]string{{"netns", "add", ns}, {"-n", ns, "link", "set", "lo", "up"}} {
		// Other tests on this machine create namespaces too, and concurrent `ip netns
		// add` calls can race on /run/netns: retry a few times before giving up.
		var out []byte
		var err error
		for try := 0; try < 3; try++ {
			if out, err = exec.Command("ip", argv...).CombinedOutput(); err == nil {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		if err != nil {
			t.Fatalf("ip %s: %v: %s", strings.Join(argv, " "), err, out)
		}
	}
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
	return ns
}

// SharedDir is a temp dir (mode 0755) that a server's own OS user (mysql, postgres) can
// reach: t.TempDir() lives under a 0700 directory. It is removed when the test ends.
func SharedDir(t testing.TB, prefix string) string {
	t.Helper()
	d, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(d) })
	if err := os.Chmod(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}
