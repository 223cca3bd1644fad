package lab

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/execx"
	"github.com/wirelab/wirelab/internal/procfs"
)

func TestCgroup2MountFromMountinfo(t *testing.T) {
	hybrid := `25 30 0:23 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs ro,mode=755
30 25 0:26 / /sys/fs/cgroup/unified rw,nosuid,relatime shared:10 - cgroup2 cgroup2 rw,nsdelegate
31 25 0:27 / /sys/fs/cgroup/memory rw,relatime shared:11 - cgroup cgroup rw,memory
`
	if cg, err := DetectCgroups(mountinfo(t, hybrid)); err != nil || cg.Root != "/sys/fs/cgroup/unified/wirelab" {
		t.Errorf("hybrid: %+v %v", cg, err)
	}
	v1only := "31 25 0:27 / /sys/fs/cgroup/memory rw,relatime shared:11 - cgroup cgroup rw,memory\n"
	if _, err := DetectCgroups(mountinfo(t, v1only)); !errors.Is(err, ErrNoCgroup2) {
		t.Errorf("v1 only: %v, want ErrNoCgroup2", err)
	}
	if _, err := DetectCgroups(procfs.At(t.TempDir())); err == nil || errors.Is(err, ErrNoCgroup2) {
		t.Errorf("no mountinfo: %v, want the read error", err)
	}
}

// mountinfo is a /proc whose self/mountinfo is body.
func mountinfo(t *testing.T, body string) procfs.FS {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "self"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "self", "mountinfo"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return procfs.At(root)
}

// fakeCgroup is a plain directory standing in for lab id's cgroup, listing pids.
func fakeCgroup(t *testing.T, root, id string, pids ...int) string {
	t.Helper()
	dir := filepath.Join(root, id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, p := range pids {
		b.WriteString(strconv.Itoa(p) + "\n")
	}
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// sleeper starts a process that ignores SIGTERM when stubborn, reaped in the background.
func sleeper(t *testing.T, stubborn bool) int {
	t.Helper()
	script := "sleep 30"
	if stubborn {
		script = "trap '' TERM; while :; do sleep 0.1; done"
	}
	cmd := exec.Command("sh", "-c", script)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	time.Sleep(50 * time.Millisecond) // let sh install its trap
	return cmd.Process.Pid
}

func TestCgroupStopEndsEveryMember(t *testing.T) {
	root := t.TempDir()
	soft, hard := sleeper(t, false), sleeper(t, true)
	dir := fakeCgroup(t, root, "abc123", soft, hard)
	cg := Cgroups{Root: root}
	if got := cg.Pids(dir); len(got) != 2 {
		t.Fatalf("Pids %v, want both sleepers", got)
	}
	start := time.Now()
	n, err := cg.Stop(dir, nil, 300*time.Millisecond)
	if err != nil || n != 2 {
		t.Fatalf("Stop: %d %v", n, err)
	}
	if left := alive([]int{soft, hard}); len(left) != 0 {
		t.Errorf("alive after Stop: %v", left)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("Stop took %s; SIGKILL should follow a 300ms grace", took)
	}
	// The plain directory goes with its files; a second Remove is fine.
	if err := cg.Remove(dir); err != nil {
		t.Fatal(err)
	}
	if err := cg.Remove(dir); err != nil {
		t.Fatalf("second remove: %v", err)
	}
	if ids := cg.List(); len(ids) != 0 {
		t.Errorf("List after remove: %v", ids)
	}
}

func TestCreateRefusesAPlainDirectory(t *testing.T) {
	cg := Cgroups{Root: t.TempDir()}
	if _, err := cg.Create("abc123"); err == nil {
		t.Fatal("a directory without cgroup.procs is not a cgroup")
	}
	if _, err := os.Stat(cg.Dir("abc123")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("refused cgroup dir left: %v", err)
	}
	if _, err := (Cgroups{}).Create("abc123"); !errors.Is(err, ErrNoCgroup2) {
		t.Errorf("no root: %v", err)
	}
}

// The lost-names case: the state names a cgroup but none of the lab's namespaces exist any
// more. Down must still stop the processes in the cgroup.
func TestDownStopsTheCgroupWithoutNamespaces(t *testing.T) {
	root, stateDir := t.TempDir(), t.TempDir()
	pid := sleeper(t, false)
	st := &State{RunID: "lost11", Hosts: []string{Wire, Client}, Path: filepath.Join(stateDir, "lost11.json"),
		Namespaces: map[string]string{Wire: "wl-lost11-wire", Client: "wl-lost11-client"},
		Cgroup:     fakeCgroup(t, root, "lost11", pid)}
	if err := st.Save(); err != nil {
		t.Fatal(err)
	}
	f := &execx.Fake{Responses: map[string]string{"ip netns list": "other\n"}}
	if err := DownState(context.Background(), f, st, nil); err != nil {
		t.Fatal(err)
	}
	if len(alive([]int{pid})) != 0 {
		t.Error("the cgroup's process survived down")
	}
	if strings.Contains(strings.Join(f.Lines(), "\n"), "netns del") {
		t.Errorf("deleted namespaces that do not exist: %v", f.Lines())
	}
	if _, err := os.Stat(st.Cgroup); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("cgroup left: %v", err)
	}
	if _, err := os.Stat(st.Path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("state left: %v", err)
	}
}

func TestAttachStartsInTheLabCgroup(t *testing.T) {
	dir := fakeCgroup(t, t.TempDir(), "abc123")
	l := Attach(&State{RunID: "abc123", Cgroup: dir}, Options{Runner: execx.OS{}})
	if _, ok := l.Runner().(execx.OS); ok {
		t.Error("a lab with a cgroup must start its commands in it")
	}
	if _, ok := Attach(&State{RunID: "x"}, Options{Runner: execx.OS{}}).Runner().(execx.OS); !ok {
		t.Error("a lab without a cgroup runs commands plainly")
	}
}
