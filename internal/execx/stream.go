package execx

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Streamed is a long-running command (a load driver) whose output lines are handed over
// as they arrive, so per-second progress can be recorded while it runs.
type Streamed struct {
	Name string
	Args []string
	Env  []string // added to this process's environment
	Dir  string   // working directory ("" = ours)
	// OnStart gets the pid once the process runs; OnStdout and OnStderr get each line.
	// They run on reading goroutines and must return quickly, or the command blocks on
	// its output.
	OnStart            func(pid int)
	OnStdout, OnStderr func(line string)
	// Cgroup, when set, is the cgroup v2 directory the command starts in (see StartInCgroup).
	Cgroup string
}

// Run runs the command to completion and returns everything it wrote to each stream,
// also on failure. When ctx ends, the command's whole process group is killed and ctx's
// cause is returned; a non-zero exit is an *exec.ExitError wrapped with the command name.
func (s Streamed) Run(ctx context.Context) (stdout, stderr string, err error) {
	cmd := exec.CommandContext(ctx, s.Name, s.Args...)
	cmd.Dir = s.Dir
	if len(s.Env) > 0 {
		cmd.Env = append(os.Environ(), s.Env...)
	}
	// Its own process group, so cancelling kills the command and anything it forked.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		return "", "", fmt.Errorf("%s: %w", s.Name, err)
	}
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		return "", "", fmt.Errorf("%s: %w", s.Name, err)
	}
	if err := StartInCgroup(cmd, s.Cgroup); err != nil {
		return "", "", fmt.Errorf("%s: start: %w", s.Name, err)
	}
	if s.OnStart != nil {
		s.OnStart(cmd.Process.Pid)
	}
	var outText, errText strings.Builder
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); readLines(outPipe, &outText, s.OnStdout) }()
	go func() { defer wg.Done(); readLines(errPipe, &errText, s.OnStderr) }()
	wg.Wait() // all output read before Wait closes the pipes
	waitErr := cmd.Wait()
	stdout, stderr = outText.String(), errText.String()
	if ctx.Err() != nil {
		return stdout, stderr, fmt.Errorf("%s: %w", s.Name, context.Cause(ctx))
	}
	if waitErr != nil {
		return stdout, stderr, fmt.Errorf("%s: %w", s.Name, waitErr)
	}
	return stdout, stderr, nil
}

// readLines copies r into all line by line, calling on (may be nil) for each line. On an
// over-long line it keeps draining, so the writer never blocks on a full pipe.
func readLines(r io.Reader, all *strings.Builder, on func(string)) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		all.WriteString(line)
		all.WriteByte('\n')
		if on != nil {
			on(line)
		}
	}
	if sc.Err() != nil {
		_, _ = io.Copy(io.Discard, r)
	}
}

// LastLines is the last n non-blank lines of a command's output, trimmed and joined with
// sep: the part of a long log an error message quotes.
func LastLines(s string, n int, sep string) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, sep)
}
