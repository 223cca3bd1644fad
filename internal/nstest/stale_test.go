package nstest

import (
	"os"
	"os/exec"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestStaleNamespaces(t *testing.T) {
	live := map[int]bool{4000: true}
	isLive := func(pid int) bool { return live[pid] }
	b36 := func(pid int) string { return strconv.FormatInt(int64(pid), 36) }
	list := strings.Join([]string{
		"wls-" + b36(4000) + "-k3x-a (id: 4)", // live maker
		"wls-" + b36(5000) + "-k3x-a (id: 2)", // dead maker
		"wls-" + b36(5000) + "-k3x-c0",
		"wls-4cw9-b",              // an older fixture's name: no pid in it
		"wltest-link-5000",        // dead maker
		"wltest-link-shaper-4000", // live maker, a tag with a dash
		"wl-abc123-client",        // a lab's namespace
		"wlm-0a1b2c3d-a",
		"",
	}, "\n")
	got := staleNamespaces(list, isLive)
	want := []string{"wls-" + b36(5000) + "-k3x-a", "wls-" + b36(5000) + "-k3x-c0", "wltest-link-5000"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("stale = %q, want %q", got, want)
	}
}

func TestFixtureIDCarriesThisProcess(t *testing.T) {
	ns := sshPrefix + FixtureID() + "-a"
	pid, ok := fixtureMaker(ns)
	if !ok || pid != os.Getpid() {
		t.Errorf("fixtureMaker(%q) = %d, %v; want %d", ns, pid, ok, os.Getpid())
	}
}

// A namespace left by a test process that was killed is removed by the sweep; one whose
// maker still runs is not.
func TestSweepRemovesAKilledMakersNamespaces(t *testing.T) {
	SkipUnlessRoot(t, "ip", "sleep")
	maker := exec.Command("sleep", "60")
	if err := maker.Start(); err != nil {
		t.Fatal(err)
	}
	id := strconv.FormatInt(int64(maker.Process.Pid), 36) + "-" + strconv.FormatInt(time.Now().UnixNano()%1e6, 36)
	ns := sshPrefix + id + "-a"
	mustRun(t, "ip", "netns", "add", ns)
	t.Cleanup(func() { KillNetns(ns) })
	exists := func() bool {
		out := mustRun(t, "ip", "netns", "list")
		return strings.Contains(out, ns+" ") || strings.Contains(out, ns+"\n")
	}
	sweepStale()
	if !exists() {
		t.Fatalf("%s removed while its maker (pid %d) runs", ns, maker.Process.Pid)
	}
	maker.Process.Kill()
	maker.Wait()
	sweepStale()
	if exists() {
		t.Errorf("%s still there after its maker was killed", ns)
	}
}
