package hosts

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
)

// fakeHost records what it is asked; Fail maps a command prefix to an error.
type fakeHost struct {
	mu     sync.Mutex
	log    []string
	files  map[string]string
	Fail   map[string]error
	Answer map[string]string
	pid    int
}

func newFakeHost() *fakeHost { return &fakeHost{files: map[string]string{}} }

func (f *fakeHost) Name() string { return "client1" }

func (f *fakeHost) Run(_ context.Context, argv ...string) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	line := strings.Join(argv, " ")
	f.log = append(f.log, line)
	for p, err := range f.Fail {
		if strings.HasPrefix(line, p) {
			return nil, fmt.Errorf("host client1: %s: %w", line, err)
		}
	}
	for p, out := range f.Answer {
		if strings.HasPrefix(line, p) {
			return []byte(out), nil
		}
	}
	return nil, nil
}

func (f *fakeHost) Copy(_ context.Context, r io.Reader, path string, mode uint32) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.files[path] = string(b)
	f.log = append(f.log, fmt.Sprintf("copy %s %o", path, mode))
	return nil
}

func (f *fakeHost) ReadFile(_ context.Context, path string) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.files[path]
	if !ok {
		return nil, errors.New("No such file or directory")
	}
	return []byte(s), nil
}

func (f *fakeHost) Start(_ context.Context, name string, argv []string, logPath string) (Proc, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pid++
	f.log = append(f.log, "start "+name+": "+strings.Join(argv, " ")+" >> "+logPath)
	return fakeProc{f: f, name: name, pid: 1000 + f.pid}, nil
}

// Stream answers like Run: Answer's output for a matching command line, fed line by line
// to onLine after onStart got the next pid.
func (f *fakeHost) Stream(ctx context.Context, argv []string, env []string, onStart func(int), onLine func(string)) (string, string, error) {
	out, err := f.Run(ctx, append(append([]string(nil), env...), argv...)...)
	if err != nil {
		return "", err.Error(), err
	}
	f.mu.Lock()
	f.pid++
	pid := 1000 + f.pid
	f.mu.Unlock()
	if onStart != nil {
		onStart(pid)
	}
	for _, l := range strings.SplitAfter(string(out), "\n") {
		if l = strings.TrimSuffix(l, "\n"); l != "" && onLine != nil {
			onLine(l)
		}
	}
	return string(out), "", nil
}

func (f *fakeHost) Close() error { return nil }

func (f *fakeHost) lines() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.log...)
}

type fakeProc struct {
	f    *fakeHost
	name string
	pid  int
}

func (p fakeProc) Pid() int { return p.pid }
func (p fakeProc) Stop(context.Context) error {
	p.f.mu.Lock()
	defer p.f.mu.Unlock()
	p.f.log = append(p.f.log, "stop "+p.name)
	return nil
}
