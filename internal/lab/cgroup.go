package lab

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/wirelab/wirelab/internal/procfs"
)

// Cgroups is the cgroup v2 subtree where each lab gets one cgroup, named by its run id.
// Every long-running process a lab starts is created inside its cgroup, so teardown finds
// them all, including those in namespaces whose names were deleted, and anything they fork.
type Cgroups struct {
	Root string    // e.g. /sys/fs/cgroup/unified/wirelab; "" = cgroups not in use
	Proc procfs.FS // to tell live processes from zombies
}

// ErrNoCgroup2 is returned when this machine has no usable cgroup v2 hierarchy.
var ErrNoCgroup2 = errors.New("no cgroup v2 hierarchy mounted")

// DetectCgroups finds the cgroup v2 mount in proc's self/mountinfo; the labs' subtree is
// its "wirelab" directory.
func DetectCgroups(proc procfs.FS) (Cgroups, error) {
	mount, err := proc.MountPoint("cgroup2")
	switch {
	case errors.Is(err, procfs.ErrNoMount):
		return Cgroups{}, ErrNoCgroup2
	case err != nil:
		return Cgroups{}, fmt.Errorf("find cgroup v2: %w", err)
	}
	return Cgroups{Root: filepath.Join(mount, "wirelab"), Proc: proc}, nil
}

// Dir is the cgroup directory of lab id.
func (c Cgroups) Dir(id string) string { return filepath.Join(c.Root, id) }

// Create makes lab id's cgroup and checks that the kernel accepts processes in it.
func (c Cgroups) Create(id string) (string, error) {
	if c.Root == "" {
		return "", ErrNoCgroup2
	}
	dir := c.Dir(id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create cgroup %s: %w", dir, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "cgroup.procs")); err != nil {
		_ = os.Remove(dir)
		return "", fmt.Errorf("create cgroup %s: not a cgroup file system: %w", dir, err)
	}
	return dir, nil
}

// List returns the run ids that have a cgroup under Root.
func (c Cgroups) List() []string {
	if c.Root == "" {
		return nil
	}
	ents, _ := os.ReadDir(c.Root)
	var ids []string
	for _, e := range ents {
		if e.IsDir() {
			ids = append(ids, e.Name())
		}
	}
	return ids
}

// Pids returns the live (non-zombie) processes in the cgroup dir.
func (c Cgroups) Pids(dir string) []int {
	if dir == "" {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil && pid > 0 && pid != os.Getpid() {
			pids = append(pids, pid)
		}
	}
	return aliveIn(c.Proc, pids)
}

// Stop ends every process in the cgroup dir: SIGTERM (mysqld shuts down cleanly on it),
// then after grace cgroup.kill (SIGKILL to every member at once, nothing can fork its way
// out), or SIGKILL to each pid where the kernel has no cgroup.kill. It returns how many
// processes there were; pids, when not nil, are stopped along with them.
func (c Cgroups) Stop(dir string, extra []int, grace time.Duration) (int, error) {
	pids := append(c.Pids(dir), extra...)
	if len(pids) == 0 {
		return 0, nil
	}
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGTERM)
	}
	left := func() []int { return append(c.Pids(dir), aliveIn(c.Proc, extra)...) }
	if waitFor(func() bool { return len(left()) == 0 }, grace) {
		return len(pids), nil
	}
	if dir != "" && writeExisting(filepath.Join(dir, "cgroup.kill"), "1") != nil {
		for _, pid := range c.Pids(dir) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	for _, pid := range aliveIn(c.Proc, extra) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	if !waitFor(func() bool { return len(left()) == 0 }, 5*time.Second) {
		return len(pids), fmt.Errorf("processes %v survived SIGKILL", left())
	}
	return len(pids), nil
}

// Remove deletes the (empty) cgroup dir; a missing one is fine. The kernel refuses while a
// process is still in it, so it retries for a moment: a killed process leaves on its own time.
// A plain directory standing in for a cgroup (it has no cgroup.controllers) is removed with
// its files.
func (c Cgroups) Remove(dir string) error {
	var err error
	waitFor(func() bool {
		err = syscall.Rmdir(dir)
		return err == nil || errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ENOTEMPTY)
	}, 2*time.Second)
	if errors.Is(err, syscall.ENOTEMPTY) {
		if _, serr := os.Stat(filepath.Join(dir, "cgroup.controllers")); errors.Is(serr, os.ErrNotExist) {
			err = os.RemoveAll(dir)
		}
	}
	if err != nil && !errors.Is(err, syscall.ENOENT) {
		return fmt.Errorf("remove cgroup %s: %w", dir, err)
	}
	// The labs' parent cgroup goes with its last lab; the kernel keeps it while another
	// lab's cgroup is still inside.
	parent := filepath.Dir(dir)
	if _, serr := os.Stat(filepath.Join(parent, "cgroup.controllers")); serr == nil {
		_ = syscall.Rmdir(parent)
	}
	return nil
}

// writeExisting writes to a file that must exist (a kernel interface file; never created).
func writeExisting(path, v string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(v)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func waitFor(done func() bool, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		if done() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// aliveIn keeps the pids that exist in proc and are not zombies (a zombie child of ours
// still answers kill(0); its state tells).
func aliveIn(proc procfs.FS, pids []int) []int {
	var out []int
	for _, pid := range pids {
		if proc.Alive(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// OrphanCgroups returns the run ids with a cgroup under cg but no state file in stateDir
// (a lab whose state was removed while its processes lived on).
func OrphanCgroups(cg Cgroups, stateDir string) []string {
	known := map[string]bool{}
	ids, _ := List(stateDir)
	for _, id := range ids {
		known[id] = true
	}
	var out []string
	for _, id := range cg.List() {
		if !known[id] {
			out = append(out, id)
		}
	}
	return out
}
