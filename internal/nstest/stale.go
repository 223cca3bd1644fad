package nstest

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wirelab/wirelab/internal/procfs"
)

// A test that is killed (kill -9, a CI job cut off) runs no t.Cleanup, so the namespaces
// it made, and the sshd or servers inside them, outlive it. Every fixture namespace is
// therefore named after the test process that made it, and the first fixture a test
// process makes removes those whose maker no longer runs: the next `make test` leaves the
// machine as the killed one found it. A live maker's namespaces are never touched, so
// packages testing in parallel keep theirs.
//
//	wls-<pid base 36>-<id>-<role>   SSH hosts (FixtureID)
//	wltest-<tag>-<pid>              Netns
const (
	sshPrefix   = "wls-"
	netnsPrefix = "wltest-"
)

var sweepOnce sync.Once

// FixtureID is a fresh id for one fixture's namespaces, wls-<FixtureID>-<role>: this
// process's pid, so a later run can tell a killed run's leftovers, and a time-based part
// that keeps two fixtures of one process apart. The first call removes the leftovers of
// test processes that no longer run.
func FixtureID() string {
	sweepOnce.Do(sweepStale)
	return strconv.FormatInt(int64(os.Getpid()), 36) + "-" + strconv.FormatInt(time.Now().UnixNano()%1e6, 36)
}

// sweepStale kills and deletes every fixture namespace whose maker has exited.
func sweepStale() {
	out, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		return
	}
	for _, ns := range staleNamespaces(string(out), Running) {
		KillNetns(ns)
	}
}

// Running reports whether pid runs (a zombie, which init reaps late here, counts as gone).
func Running(pid int) bool { return procfs.FS{}.Alive(pid) }

// staleNamespaces picks, from `ip netns list` output, the fixture namespaces whose maker
// is not alive. Names of another form (a lab's, a fixture of an older build) are left
// alone.
func staleNamespaces(list string, alive func(pid int) bool) []string {
	var out []string
	for _, line := range strings.Split(list, "\n") {
		f := strings.Fields(line) // "name" or "name (id: 3)"
		if len(f) == 0 {
			continue
		}
		ns := f[0]
		if pid, ok := fixtureMaker(ns); ok && !alive(pid) {
			out = append(out, ns)
		}
	}
	return out
}

// fixtureMaker is the pid a fixture namespace's name carries.
func fixtureMaker(ns string) (int, bool) {
	var field string
	switch {
	case strings.HasPrefix(ns, sshPrefix):
		parts := strings.Split(strings.TrimPrefix(ns, sshPrefix), "-")
		if len(parts) != 3 {
			return 0, false
		}
		pid, err := strconv.ParseInt(parts[0], 36, 32)
		return int(pid), err == nil && pid > 1
	case strings.HasPrefix(ns, netnsPrefix):
		field = ns[strings.LastIndexByte(ns, '-')+1:]
	default:
		return 0, false
	}
	pid, err := strconv.Atoi(field)
	return pid, err == nil && pid > 1
}
