package hosts

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/wirelab/wirelab/internal/execx"
)

// stderrTailLines is how many of a failed command's last stderr lines its error carries.
const stderrTailLines = 5

// killWait bounds what a cancelled Stream does after ctx ended: waiting for the pid it has
// not seen yet, the kill session, and the session's end.
const killWait = 5 * time.Second

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// checkEnv refuses an environment entry that is not NAME=value with a shell variable name:
// SSH hands it to a shell as an assignment, and anything else would be run as a command.
func checkEnv(host string, env []string) error {
	for _, kv := range env {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || !envName.MatchString(k) {
			return fmt.Errorf("host %s: environment entry %q: want NAME=value", host, kv)
		}
	}
	return nil
}

// streamError is a finished command's failure: the host, the command, the cause and the
// last lines of its stderr.
func streamError(host string, argv []string, err error, stderr string) error {
	if t := execx.LastLines(stderr, stderrTailLines, "; "); t != "" {
		return fmt.Errorf("host %s: %s: %w: %s", host, ShellJoin(argv), err, t)
	}
	return fmt.Errorf("host %s: %s: %w", host, ShellJoin(argv), err)
}

// lockedText is a text buffer written by one goroutine and read by another.
type lockedText struct {
	mu sync.Mutex
	b  strings.Builder
}

func (t *lockedText) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.b.Write(p)
}

func (t *lockedText) addLine(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b.WriteString(line)
	t.b.WriteByte('\n')
}

func (t *lockedText) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.b.String()
}

// streamScript prints the shell's pid as the first line of stdout, then execs argv in its
// place, so the pid is the command's own. sshd starts each session's command as a session
// (and process group) leader and the login shell execs this sh, so the pid is also the
// process group the cancel kills.
const streamScript = `echo $$; exec "$0" "$@"`

// killScript kills pid's process group (when it leads one) and pid itself, then waits up to
// 5 s for it to go. A pid that is gone already is not an error.
const killScript = `p=%d; kill -KILL -$p 2>/dev/null; kill -KILL $p 2>/dev/null; i=0; while kill -0 $p 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done; exit 0`

// streamLine is Stream's command line. Through sudo, sudo's child is not a process group
// leader, so `setsid -w` makes the streamed sh one (and waits for it, so its exit status
// is the session's): the printed pid is again the process group the cancel kills.
func streamLine(argv, env []string, sudo bool) string {
	var cmd strings.Builder
	cmd.WriteString("exec ")
	if sudo {
		cmd.WriteString("sudo -n ")
	}
	if len(env) > 0 {
		cmd.WriteString("env " + ShellJoin(env) + " ")
	}
	if sudo {
		cmd.WriteString("setsid -w ")
	}
	cmd.WriteString("sh -c " + ShellQuote(streamScript) + " " + ShellJoin(argv))
	return cmd.String()
}

// Stream implements Host. OpenSSH's sshd ignores the signals a client asks to deliver to a
// session's command, so a cancel kills the command through a second session, by the pid
// the command reported first.
func (s *SSH) Stream(ctx context.Context, argv []string, env []string, onStart func(pid int), onLine func(line string)) (string, string, error) {
	if len(argv) == 0 {
		return "", "", fmt.Errorf("host %s: stream: empty command", s.cfg.Name)
	}
	if err := checkEnv(s.cfg.Name, env); err != nil {
		return "", "", err
	}
	// exec: the login shell (dash forks otherwise) becomes env, then sh, then argv, so the
	// reported pid is the session's leader, whose process group is the whole command.
	cmd := streamLine(argv, env, s.cfg.Sudo)

	sess, err := s.client.NewSession()
	if err != nil {
		return "", "", fmt.Errorf("host %s: open an SSH session for %s: %w (connection lost?)", s.cfg.Name, ShellJoin(argv), err)
	}
	defer sess.Close()
	var stdout, stderr lockedText
	sess.Stderr = &stderr
	outPipe, err := sess.StdoutPipe()
	if err != nil {
		return "", "", fmt.Errorf("host %s: %s: %w", s.cfg.Name, ShellJoin(argv), err)
	}
	if err := sess.Start(cmd); err != nil {
		return "", "", fmt.Errorf("host %s: start %s: %w", s.cfg.Name, ShellJoin(argv), err)
	}
	pids := make(chan int, 1)
	done := make(chan error, 1)
	go func() {
		readStream(outPipe, &stdout, pids, onStart, onLine)
		done <- sess.Wait() // after the last line: Wait does not wait for a pipe's reader
	}()
	select {
	case err = <-done:
	case <-ctx.Done():
		s.killStream(pids, done, sess)
		return stdout.String(), stderr.String(), fmt.Errorf("host %s: %s: %w", s.cfg.Name, ShellJoin(argv), ctx.Err())
	}
	if err != nil {
		return stdout.String(), stderr.String(), streamError(s.cfg.Name, argv, err, stderr.String())
	}
	return stdout.String(), stderr.String(), nil
}

// killStream kills a cancelled Stream's command on the host and ends its session, each
// step bounded by killWait.
func (s *SSH) killStream(pids <-chan int, done <-chan error, sess *ssh.Session) {
	pid := 0
	select {
	case pid = <-pids:
	case <-done: // it ended by itself
		return
	case <-time.After(killWait):
	}
	if pid > 1 {
		kctx, cancel := context.WithTimeout(context.Background(), 2*killWait)
		_, _ = s.exec(kctx, "sh -c "+ShellQuote(fmt.Sprintf(killScript, pid)), nil)
		cancel()
	}
	_ = sess.Signal(ssh.SIGKILL) // for servers that do deliver it
	_ = sess.Close()
	select {
	case <-done:
	case <-time.After(killWait):
	}
}

// readStream reads the stream's stdout: the first line is the pid streamScript reports
// (sent on pids and to onStart), every later one is the command's, added to out and handed
// to onLine. An over-long line ends the scan, and the rest is drained so the command never
// blocks on a full channel.
func readStream(r io.Reader, out *lockedText, pids chan<- int, onStart func(int), onLine func(string)) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	first := true
	for sc.Scan() {
		line := sc.Text()
		if first {
			first = false
			if pid, err := strconv.Atoi(line); err == nil && pid > 1 {
				pids <- pid
				if onStart != nil {
					onStart(pid)
				}
				continue
			}
		}
		out.addLine(line)
		if onLine != nil {
			onLine(line)
		}
	}
	if err := sc.Err(); err != nil && !errors.Is(err, io.EOF) {
		_, _ = io.Copy(io.Discard, r)
	}
}
