package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/nstest"
)

// wlResult runs the binary like wl but returns the exit code and both streams instead of
// failing on a non-zero exit.
func wlResult(t *testing.T, stateDir string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "WIRELAB_STATE_DIR="+stateDir)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return out.String(), errb.String(), ee.ExitCode()
	}
	if err != nil {
		t.Fatalf("wirelab %s: %v", strings.Join(args, " "), err)
	}
	return out.String(), errb.String(), 0
}

// waitExit waits for a started wirelab to exit and fails the test (after killing it) past d.
func waitExit(t *testing.T, cmd *exec.Cmd, logs *bytes.Buffer, d time.Duration) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("wirelab %s did not finish in %s:\n%s", strings.Join(cmd.Args[1:], " "), d, logs)
		return nil
	}
}

// A lab belongs to the run that made it while that run measures: `link set` by hand is
// refused with the owner named, and goes through with --force (the run's remaining
// points then measure the new wire, which this test does not look at).
func TestLinkSetRefusesALabARunOwns(t *testing.T) {
	skipUnlessRoot(t)
	state, out := t.TempDir(), t.TempDir()
	cmd, logs, id := startRun(t, state, out, "3s")
	t.Cleanup(func() { wl(t, state, "down", "--lab", id, "--force"); assertGone(t, id) })
	pid := strconv.Itoa(cmd.Process.Pid)

	st := wl(t, state, "status")
	if !strings.Contains(st, "owner    `wirelab run` (pid "+pid+"), measuring") {
		t.Errorf("status does not show the run as owner:\n%s", st)
	}
	_, stderr, code := wlResult(t, state, "link", "set", "--rate", "10mbit")
	if code == 0 || !strings.Contains(stderr, "lab "+id+" belongs to `wirelab run` (pid "+pid+")") ||
		!strings.Contains(stderr, "--force") {
		t.Fatalf("link set on an owned lab: exit %d, stderr %q; want a refusal naming pid %s", code, stderr, pid)
	}
	if st := wl(t, state, "status"); !strings.Contains(st, "rate 50mbit") {
		t.Errorf("a refused link set changed the wire:\n%s", st)
	}
	wl(t, state, "link", "set", "--force", "--rate", "10mbit")
	if st := wl(t, state, "status"); !strings.Contains(st, "rate 10mbit") {
		t.Errorf("link set --force did not re-shape:\n%s", st)
	}
	if err := waitExit(t, cmd, logs, 2*time.Minute); err != nil {
		t.Fatalf("run: %v\n%s", err, logs)
	}
	assertGone(t, id)
}

// One measurement at a time: a second run with --no-wait fails naming the first; without it
// the second says whom it waits for, starts after the first is done and records the wait.
func TestSecondRunWaitsForTheFirst(t *testing.T) {
	skipUnlessRoot(t)
	state, out := t.TempDir(), t.TempDir()
	first, logs, id := startRun(t, state, out, "3s")
	t.Cleanup(func() { wlResult(t, state, "down", "--lab", id, "--force") })
	pid := strconv.Itoa(first.Process.Pid)
	holder := "run, lab " + id + ", pid " + pid

	short := []string{"--threads", "1", "--duration", "2s", "--warmup", "0s", "--tables", "1", "--table-size", "1000"}
	_, stderr, code := wlResult(t, state, append([]string{"run", "--no-wait", "--out", t.TempDir()}, short...)...)
	if code == 0 || !strings.Contains(stderr, holder) {
		t.Fatalf("run --no-wait while %s measures: exit %d, stderr %q", holder, code, stderr)
	}

	out2 := t.TempDir()
	second := exec.Command(bin, append([]string{"run", "--out", out2}, short...)...)
	second.Env = append(os.Environ(), "WIRELAB_STATE_DIR="+state)
	var logs2 bytes.Buffer
	second.Stdout, second.Stderr = &logs2, &logs2
	if err := second.Start(); err != nil {
		t.Fatal(err)
	}
	if err := waitExit(t, first, logs, 2*time.Minute); err != nil {
		t.Fatalf("first run: %v\n%s", err, logs)
	}
	firstDone := time.Now()
	if err := waitExit(t, second, &logs2, 2*time.Minute); err != nil {
		t.Fatalf("second run: %v\n%s", err, logs2.String())
	}
	if !strings.Contains(logs2.String(), "waiting for "+holder) {
		t.Errorf("second run did not say it waits for %s:\n%s", holder, logs2.String())
	}
	if time.Since(firstDone) < 2*time.Second {
		t.Errorf("second run finished %s after the first: it cannot have measured after it", time.Since(firstDone))
	}
	var r struct {
		Environment struct {
			Machine *struct {
				WaitedS   float64 `json:"waited_s"`
				WaitedFor string  `json:"waited_for"`
				Exclusive bool    `json:"exclusive"`
			} `json:"machine"`
		} `json:"environment"`
	}
	b, err := os.ReadFile(filepath.Join(out2, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	if m := r.Environment.Machine; m == nil || m.WaitedS <= 0 || m.WaitedFor != holder || !m.Exclusive {
		t.Errorf("second run's environment.machine %+v, want a wait for %s", m, holder)
	}
	if md, _ := os.ReadFile(filepath.Join(out2, "report.md")); !strings.Contains(string(md), "for "+holder+", then held the measurement lock") {
		t.Errorf("report does not say the run waited for %s", holder)
	}
}

// The lost-names case: the process that made a lab dies with SIGKILL and its namespaces
// lose their names (`ip netns del` while processes still hold them), so `ip netns pids`
// finds nothing. `down --all` must still stop every process the lab started (MariaDB, both
// tunnel ends, sysbench): they are in the lab's cgroup. With the state file gone too, the
// cgroup alone leads to them.
func TestDownFindsProcessesAfterTheNamesAreGone(t *testing.T) {
	skipUnlessRoot(t)
	for _, stateGone := range []bool{false, true} {
		t.Run("state file removed "+strconv.FormatBool(stateGone), func(t *testing.T) {
			state, out := t.TempDir(), t.TempDir()
			cmd, _, id := startMeasuring(t, state, "run", "--channel", "tunnel", "--threads", "1", "--duration", "60s",
				"--warmup", "0s", "--tables", "1", "--table-size", "1000", "--out", out)
			t.Cleanup(func() { wlResult(t, state, "down", "--lab", id, "--force") })
			var st struct {
				Cgroup string `json:"cgroup"`
			}
			b, err := os.ReadFile(filepath.Join(state, id+".json"))
			if err != nil {
				t.Fatalf("the running lab's state file: %v", err)
			}
			if err := json.Unmarshal(b, &st); err != nil {
				t.Fatalf("the running lab's state file %s: %v", id+".json", err)
			}
			if st.Cgroup == "" {
				nstest.Unavailable(t, "lab has no cgroup on this machine: nothing to find after the names are gone")
			}
			pids := cgroupProcs(st.Cgroup)
			comms := map[string]bool{}
			for _, p := range pids {
				c, _ := os.ReadFile("/proc/" + strconv.Itoa(p) + "/comm")
				comms[strings.TrimSpace(string(c))] = true
			}
			for _, want := range []string{"mariadbd", "sysbench", "wirelab"} { // wirelab: the tunnel ends
				if !comms[want] {
					t.Errorf("no %s in the lab's cgroup (%v)", want, comms)
				}
			}

			_ = cmd.Process.Signal(syscall.SIGKILL)
			_ = cmd.Wait()
			for _, role := range []string{"client", "wire", "server"} {
				if o, err := exec.Command("ip", "netns", "del", "wl-"+id+"-"+role).CombinedOutput(); err != nil {
					t.Fatalf("ip netns del: %v %s", err, o)
				}
			}
			if stateGone {
				if err := os.Remove(filepath.Join(state, id+".json")); err != nil {
					t.Fatal(err)
				}
			}
			if len(alivePids(pids)) == 0 {
				t.Fatal("the lab's processes died with its maker: nothing left to test")
			}

			// --all reaps every lab on the machine, whatever its state dir: only when no
			// other lab is up (the measurement lock these tests run under should see to it).
			scope := []string{"--all"}
			if others := otherLabs(id, filepath.Dir(st.Cgroup)); len(others) > 0 {
				t.Logf("other labs are up (%v): down --lab %s instead of --all", others, id)
				scope = []string{"--lab", id}
			}
			o := wl(t, state, append([]string{"down"}, scope...)...)
			if !strings.Contains(o, "lab "+id+" removed") {
				t.Errorf("down --all did not report lab %s:\n%s", id, o)
			}
			if left := alivePids(pids); len(left) != 0 {
				t.Errorf("processes of lab %s left after down --all: %v", id, left)
			}
			if _, err := os.Stat(st.Cgroup); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("cgroup %s left: %v", st.Cgroup, err)
			}
			assertGone(t, id)
		})
	}
}

func cgroupProcs(dir string) []int {
	b, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		if p, err := strconv.Atoi(f); err == nil {
			pids = append(pids, p)
		}
	}
	return pids
}

// alivePids keeps the pids that still run (a zombie waiting for init's reaping is gone).
func alivePids(pids []int) []int {
	var out []int
	for _, p := range pids {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/stat")
		if err != nil {
			continue
		}
		if i := bytes.LastIndexByte(b, ')'); i > 0 && i+2 < len(b) && b[i+2] == 'Z' {
			continue
		}
		out = append(out, p)
	}
	return out
}

// otherLabs lists lab ids other than id with a namespace or a cgroup under cgroupRoot.
func otherLabs(id, cgroupRoot string) []string {
	seen := map[string]bool{}
	out, _ := exec.Command("ip", "netns", "list").Output()
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			if p := strings.SplitN(f[0], "-", 3); len(p) == 3 && p[0] == "wl" && p[1] != id {
				seen[p[1]] = true
			}
		}
	}
	ents, _ := os.ReadDir(cgroupRoot)
	for _, e := range ents {
		if e.IsDir() && e.Name() != id {
			seen[e.Name()] = true
		}
	}
	var ids []string
	for k := range seen {
		ids = append(ids, k)
	}
	return ids
}

// `down` racing a live run: refused without --force; with it the run is stopped first
// (it tears its own lab down and exits) and nothing of the lab is left.
func TestDownForceStopsTheOwnerFirst(t *testing.T) {
	skipUnlessRoot(t)
	state, out := t.TempDir(), t.TempDir()
	cmd, logs, id := startRun(t, state, out, "60s")
	t.Cleanup(func() { wlResult(t, state, "down", "--lab", id, "--force") })
	pid := strconv.Itoa(cmd.Process.Pid)
	if _, stderr, code := wlResult(t, state, "down"); code == 0 || !strings.Contains(stderr, "(pid "+pid+")") {
		t.Fatalf("down of a lab a run owns: exit %d, stderr %q", code, stderr)
	}
	if !sysbenchIn("wl-" + id + "-client") {
		t.Fatal("a refused down disturbed the run")
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	start := time.Now()
	stdout, stderr, code := wlResult(t, state, "down", "--force")
	if code != 0 || !strings.Contains(stderr, "stopping its owner `wirelab run` (pid "+pid+")") {
		t.Fatalf("down --force: exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatalf("the run still runs after down --force returned:\n%s", logs)
	}
	// A second interrupt after 2 s aborts the 60 s point: well before the 60 s SIGKILL.
	if took := time.Since(start); took > 40*time.Second {
		t.Errorf("down --force took %s", took)
	}
	if strings.Contains(stderr, "was killed") {
		t.Errorf("the run had to be killed instead of tearing down:\n%s", stderr)
	}
	assertGone(t, id)
}
