package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/wirelab/wirelab/internal/hosts"
)

// fakeHost is a server host in memory: files (its /proc included) in a map, commands
// recorded and answered by prefix, and an agent simulated by onStart.
type fakeHost struct {
	mu      sync.Mutex
	files   map[string]string
	log     []string
	answers map[string]string
	// onStart plays the agent once Start has given it pid; it may change files.
	onStart func(f *fakeHost, pid int)
	// stopKeepsServer leaves mariadbd's /proc entry when the agent is stopped.
	stopKeepsServer bool
	serverPid       int
	nextPid         int
	// killed are the pids killed with their children (killTreeScript).
	killed []string
	// fails are command prefixes that exit non-zero.
	fails []string
}

func newFakeHost() *fakeHost {
	return &fakeHost{files: map[string]string{}, answers: map[string]string{}, nextPid: 4000}
}

// procStat is a whole /proc/<pid>/stat line (the fields of a real sleeping process).
func procStat(pid int, comm string) string {
	return fmt.Sprintf("%d (%s) S 1 %d %d 0 -1 4194560 4053 3361 0 0 2 0 0 1 20 0 1 0 55781 222453760 7509 "+
		"18446744073709551615 94234110230528 94234115643817 140720698542672 0 0 0 0 24129536 84487 1 0 0 17 0 0 0 0 0 0 "+
		"94234118109360 94234118326666 94234488762368 140720698550629 140720698550719 140720698550719 140720698552276 0", pid, comm, pid, pid)
}

func (f *fakeHost) set(path, content string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.files[path] = content
}

func (f *fakeHost) remove(path string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.files, path)
}

func (f *fakeHost) lines() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.log...)
}

func (f *fakeHost) killedPids() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.killed...)
}

func (f *fakeHost) Name() string { return "db1" }

func (f *fakeHost) Run(_ context.Context, argv ...string) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	line := strings.Join(argv, " ")
	f.log = append(f.log, line)
	switch {
	case strings.HasPrefix(line, "rm -f -- "):
		delete(f.files, strings.TrimPrefix(line, "rm -f -- "))
	case strings.HasPrefix(line, "sh -c "+killTreeScript+" sh "):
		f.killed = append(f.killed, strings.TrimPrefix(line, "sh -c "+killTreeScript+" sh "))
		delete(f.files, "/proc/"+f.killed[len(f.killed)-1]+"/stat")
	}
	for _, p := range f.fails {
		if strings.HasPrefix(line, p) {
			return nil, fmt.Errorf("host db1: %s: exit status 1", line)
		}
	}
	for p, out := range f.answers {
		if strings.HasPrefix(line, p) {
			return []byte(out), nil
		}
	}
	return nil, nil
}

func (f *fakeHost) Copy(_ context.Context, r io.Reader, path string, _ uint32) error {
	b, err := io.ReadAll(r)
	if err == nil {
		f.set(path, string(b))
	}
	return err
}

func (f *fakeHost) ReadFile(_ context.Context, path string) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.files[path]
	if !ok {
		return nil, fmt.Errorf("host db1: cat -- %s: %w", path, errors.New("No such file or directory"))
	}
	return []byte(s), nil
}

func (f *fakeHost) Start(_ context.Context, name string, argv []string, logPath string) (hosts.Proc, error) {
	f.mu.Lock()
	f.nextPid++
	pid := f.nextPid
	f.files[fmt.Sprintf("/proc/%d/stat", pid)] = procStat(pid, "wirelab")
	f.log = append(f.log, "start "+name+": "+strings.Join(argv, " ")+" >> "+logPath)
	f.mu.Unlock()
	if f.onStart != nil {
		f.onStart(f, pid)
	}
	return &fakeProc{f: f, pid: pid}, nil
}

func (f *fakeHost) Stream(context.Context, []string, []string, func(int), func(string)) (string, string, error) {
	return "", "", errors.New("not used")
}

func (f *fakeHost) Close() error { return nil }

type fakeProc struct {
	f   *fakeHost
	pid int
}

func (p *fakeProc) Pid() int { return p.pid }

// Stop ends the agent, which stops mariadbd unless stopKeepsServer.
func (p *fakeProc) Stop(context.Context) error {
	f := p.f
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log = append(f.log, fmt.Sprintf("stop %d", p.pid))
	delete(f.files, fmt.Sprintf("/proc/%d/stat", p.pid))
	if !f.stopKeepsServer && f.serverPid > 0 {
		delete(f.files, fmt.Sprintf("/proc/%d/stat", f.serverPid))
	}
	return nil
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
