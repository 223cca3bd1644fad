package lab

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/execx"
	"github.com/wirelab/wirelab/internal/procfs"

	"github.com/wirelab/wirelab/internal/nstest"
)

// On the real kernel: a process started into the lab's cgroup is in it from the start with
// what it forks, Stop ends them all (cgroup.kill for the one that ignores SIGTERM), and the
// cgroup can then be removed.
func TestRealCgroupHoldsWhatItStarts(t *testing.T) {
	nstest.SkipUnlessRoot(t)
	cg, err := DetectCgroups(procfs.FS{})
	if err != nil {
		nstest.Unavailable(t, "no cgroup v2 here: %v", err)
	}
	id := "test" + strconv.Itoa(os.Getpid())
	dir, err := cg.Create(id)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = cg.Stop(dir, nil, 0); _ = cg.Remove(dir) })
	cmd := exec.Command("sh", "-c", "trap '' TERM; sleep 30 & while :; do sleep 0.1; done")
	if err := execx.StartInCgroup(cmd, dir); err != nil {
		t.Fatal(err)
	}
	go func() { _ = cmd.Wait() }()
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/cgroup")
	if !strings.Contains(string(b), "/wirelab/"+id) {
		t.Fatalf("child not in the lab cgroup: %s", b)
	}
	time.Sleep(100 * time.Millisecond)
	if n := len(cg.Pids(dir)); n < 2 {
		t.Fatalf("%d processes in the cgroup, want sh and its sleep", n)
	}
	if _, err := cg.Stop(dir, nil, 200*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if left := cg.Pids(dir); len(left) != 0 {
		t.Fatalf("left in the cgroup: %v", left)
	}
	if err := cg.Remove(dir); err != nil {
		t.Fatal(err)
	}
}
