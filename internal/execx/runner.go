package execx

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync"
)

// Runner runs one command to completion and returns its standard output. A non-zero exit
// is an error that carries the command line and its standard error.
type Runner interface {
	Run(ctx context.Context, name string, args ...string) ([]byte, error)
}

// OS runs commands on this machine.
type OS struct{}

// Run implements Runner.
func (OS) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	return runCmd(ctx, "", name, args...)
}

// runCmd runs one command, inside the cgroup v2 directory cgroup unless it is "".
func runCmd(ctx context.Context, cgroup, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := StartInCgroup(cmd, cgroup)
	if err == nil {
		err = cmd.Wait()
	}
	if err != nil {
		return stdout.Bytes(), fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err,
			strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// InNetns returns the argv that runs name+args inside the named network namespace.
func InNetns(ns, name string, args ...string) (string, []string) {
	return "ip", append([]string{"netns", "exec", ns, name}, args...)
}

// Call is one recorded invocation of a Fake runner.
type Call struct {
	Name string
	Args []string
}

// String renders the call as a shell-like line, for assertions in tests.
func (c Call) String() string { return strings.TrimSpace(c.Name + " " + strings.Join(c.Args, " ")) }

// Fake records calls and answers them from Responses (keyed by the call's String() prefix).
// It is for tests of planners and parsers that must not touch the kernel.
type Fake struct {
	mu        sync.Mutex
	Calls     []Call
	Responses map[string]string // prefix of Call.String() -> stdout
	Errors    map[string]error  // prefix of Call.String() -> error
}

// Run implements Runner.
func (f *Fake) Run(_ context.Context, name string, args ...string) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := Call{Name: name, Args: append([]string(nil), args...)}
	f.Calls = append(f.Calls, c)
	line := c.String()
	for p, err := range f.Errors {
		if strings.HasPrefix(line, p) {
			return nil, err
		}
	}
	for p, out := range f.Responses {
		if strings.HasPrefix(line, p) {
			return []byte(out), nil
		}
	}
	return nil, nil
}

// Lines returns every recorded call as a line.
func (f *Fake) Lines() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]string, len(f.Calls))
	for i, c := range f.Calls {
		out[i] = c.String()
	}
	return out
}
