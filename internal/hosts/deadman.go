package hosts

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/wirelab/wirelab/internal/execx"
)

// Deadman is the dead-man switch that runs on a shaped host (`wirelab agent deadman`):
// wirelab touches the renewal file every TTL/3 over SSH; when its mtime gets older than the
// TTL (wirelab killed, connection lost, laptop closed), or the file is gone, or the
// switch itself is told to stop (SIGTERM), it runs the undo commands and exits. Both
// times are the host's own (touch sets the mtime), so clock skew between the machines
// does not matter.
type Deadman struct {
	Renew string        // the renewal file
	TTL   time.Duration // how old the renewal may get
	Undo  [][]string    // the commands that remove the shaping (UndoFile)
	// DelayerPid is the delay line's pid file, "" for none: once Undo has removed the rules
	// that feed it, the delayer it names is stopped too.
	DelayerPid string
	Runner     execx.Runner // runs them; execx.OS{} on the host
	Log        *slog.Logger
	// Now and Poll are for tests: the clock, and how often the file is looked at
	// (0 = TTL/10 within 50 ms..1 s).
	Now  func() time.Time
	Poll time.Duration
}

// Watch blocks until the renewal expires or ctx is done, then undoes and returns the
// undo's error. Undoing when ctx ends too means that stopping the switch (wirelab's
// teardown, or anyone's kill) never leaves the shaping in place.
func (d *Deadman) Watch(ctx context.Context) error {
	if d.TTL <= 0 {
		return errors.New("deadman: the TTL must be positive")
	}
	now, poll, log := d.Now, d.Poll, d.Log
	if now == nil {
		now = time.Now
	}
	if poll <= 0 {
		poll = min(max(d.TTL/10, 50*time.Millisecond), time.Second)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	t := time.NewTicker(poll)
	defer t.Stop()
	reason := ""
	for reason == "" {
		if age, ok := d.age(now()); !ok {
			reason = "renewal file " + d.Renew + " is gone"
		} else if age > d.TTL {
			reason = fmt.Sprintf("not renewed for %s (TTL %s)", age.Round(time.Millisecond), d.TTL)
		}
		if reason != "" {
			break
		}
		select {
		case <-ctx.Done():
			reason = "stopped"
		case <-t.C:
		}
	}
	log.Info("deadman: removing the shaping", "reason", reason)
	undo := d.Undo
	if d.DelayerPid != "" {
		undo = append(undo[:len(undo):len(undo)], retire(d.DelayerPid, delayerMark))
	}
	return RunUndo(context.WithoutCancel(ctx), d.Runner, undo)
}

// age is how long ago the renewal file was touched; false when it is missing.
func (d *Deadman) age(now time.Time) (time.Duration, bool) {
	fi, err := os.Stat(d.Renew)
	if err != nil {
		return 0, false
	}
	return now.Sub(fi.ModTime()), true
}

// RunUndo runs every command, also after one fails, and ignores failures that only say
// the thing is already gone, so it is safe on a half-shaped NIC and when run twice.
func RunUndo(ctx context.Context, r execx.Runner, cmds [][]string) error {
	var errs []error
	for _, c := range cmds {
		if len(c) == 0 {
			continue
		}
		if _, err := r.Run(ctx, c[0], c[1:]...); err != nil && !alreadyGone(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// alreadyGone reports whether err only says that what a teardown command removes is not
// there (tc, ip and iptables' messages), or that the program is not installed, so it made
// nothing to remove (iptables on a client that shapes rate only).
func alreadyGone(err error) bool {
	s := err.Error()
	for _, m := range []string{
		"Cannot delete qdisc with handle of zero", "Cannot find specified qdisc",
		"Cannot find device", "No such file or directory", "Invalid handle", "does not exist",
		"No chain/target/match by that name", "Bad rule (does a matching rule exist",
		"executable file not found", "exited with status 127",
	} {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}

// FormatUndo renders commands as the undo file: one command a line, words separated by
// single spaces. Words are device names, handles and keywords, never with blanks.
func FormatUndo(cmds [][]string) (string, error) {
	var b strings.Builder
	for _, c := range cmds {
		for _, w := range c {
			if w == "" || strings.ContainsAny(w, " \t\n#") {
				return "", fmt.Errorf("undo command %q: word %q cannot go in an undo file", c, w)
			}
		}
		b.WriteString(strings.Join(c, " ") + "\n")
	}
	return b.String(), nil
}

// ParseUndo reads an undo file back; blank lines and lines starting with # are skipped.
// Only tc, ip and iptables commands are accepted: the switch runs as root on a real host.
func ParseUndo(s string) ([][]string, error) {
	var out [][]string
	for i, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if f[0] != "tc" && f[0] != "ip" && f[0] != "iptables" && f[0] != "ip6tables" {
			return nil, fmt.Errorf("undo file line %d: %q: only tc, ip and iptables commands may be undone", i+1, line)
		}
		out = append(out, f)
	}
	return out, nil
}
