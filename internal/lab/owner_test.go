package lab

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/procfs"
)

// A real /proc/<pid>/stat line whose command holds a space and a parenthesis.
const statLine = "812 (wirelab (x) y) S 1 812 812 0 -1 4194560 1530 0 0 0 12 3 0 0 20 0 9 0 42715 1300000000 5000 18446744073709551615 1 1 0 0 0 0 0 0 2143420159 0 0 0 17 1 0 0 0 0 0"

func writeStat(t *testing.T, procRoot string, pid int, line string) {
	t.Helper()
	dir := filepath.Join(procRoot, strconv.Itoa(pid))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLiveOwnerChecksPidStartAndZombie(t *testing.T) {
	root := t.TempDir()
	proc := procfs.At(root)
	writeStat(t, root, 812, statLine)
	owned := &State{RunID: "4ee4e7", Owner: &Owner{Pid: 812, StartTicks: 42715, Command: "study bandwidth"}}
	if o, ok := owned.LiveOwner(proc); !ok || o.Pid != 812 {
		t.Fatalf("running owner not live: %v %v", o, ok)
	}
	reused := &State{Owner: &Owner{Pid: 812, StartTicks: 100}}
	if _, ok := reused.LiveOwner(proc); ok {
		t.Error("a pid reused by a later process is not the owner")
	}
	gone := &State{Owner: &Owner{Pid: 813, StartTicks: 42715}}
	if _, ok := gone.LiveOwner(proc); ok {
		t.Error("an exited owner is not live")
	}
	if _, ok := (&State{}).LiveOwner(proc); ok {
		t.Error("a lab by hand has no owner")
	}
	writeStat(t, root, 812, strings.Replace(statLine, ") S ", ") Z ", 1))
	if _, ok := owned.LiveOwner(proc); ok {
		t.Error("a zombie owner is not live")
	}
}

func TestCheckOwnerNamesPidAndCommand(t *testing.T) {
	root := t.TempDir()
	proc := procfs.At(root)
	writeStat(t, root, 812, statLine)
	st := &State{RunID: "4ee4e7", Owner: &Owner{Pid: 812, StartTicks: 42715, Command: "study bandwidth"}}
	err := st.CheckOwner(proc, "re-shape it anyway")
	if !errors.Is(err, ErrOwned) {
		t.Fatalf("CheckOwner: %v, want ErrOwned", err)
	}
	want := "lab 4ee4e7 belongs to `wirelab study bandwidth` (pid 812), which is measuring; use --force to re-shape it anyway"
	if err.Error() != want {
		t.Errorf("message\n got %s\nwant %s", err, want)
	}
}

func TestSelfOwnerIsLive(t *testing.T) {
	o, err := SelfOwner("run")
	if err != nil {
		t.Fatal(err)
	}
	st := &State{RunID: "x", Owner: o}
	if got, ok := st.LiveOwner(procfs.FS{}); !ok || got.Pid != os.Getpid() || got.Command != "run" {
		t.Fatalf("this process as owner: %+v %v", got, ok)
	}
	// This process owning the lab may act on it.
	if err := st.CheckOwner(procfs.FS{}, "x"); err != nil {
		t.Errorf("owner checking its own lab: %v", err)
	}
}

// An owner that finishes its point on the first SIGTERM and exits on the second, and one
// that ignores both: StopOwner ends each, the second with SIGKILL.
func TestStopOwnerTermsTwiceThenKills(t *testing.T) {
	for _, c := range []struct {
		name, script string
		killed       bool
	}{
		{"exits on the second interrupt", "n=0; trap 'n=$((n+1)); [ $n -ge 2 ] && exit 0' TERM; while :; do sleep 0.05; done", false},
		{"ignores interrupts", "trap '' TERM; while :; do sleep 0.05; done", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command("sh", "-c", c.script)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			go func() { _ = cmd.Wait() }()
			t.Cleanup(func() { _ = cmd.Process.Kill() })
			time.Sleep(50 * time.Millisecond)
			st, err := procfs.FS{}.Stat(cmd.Process.Pid)
			if err != nil {
				t.Fatal(err)
			}
			o := Owner{Pid: cmd.Process.Pid, StartTicks: st.StartTime, Command: "run"}
			killed, err := StopOwner(procfs.FS{}, o, 200*time.Millisecond, time.Second)
			if err != nil || killed != c.killed {
				t.Fatalf("StopOwner: killed %v, %v; want killed %v", killed, err, c.killed)
			}
			if _, ok := (&State{Owner: &o}).LiveOwner(procfs.FS{}); ok {
				t.Error("owner still live")
			}
		})
	}
}
