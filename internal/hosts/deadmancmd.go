package hosts

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/wirelab/wirelab/internal/execx"
	"github.com/wirelab/wirelab/internal/flagx"
)

// The dead-man switch's TTL: three renewals fit in the default (every TTL/3), and a lost
// wirelab throttles a real NIC for at most this long; below the minimum an SSH round trip
// that stalls would fire it, above the maximum a NIC stays shaped too long.
const (
	DefaultDeadmanTTL = 30 * time.Second
	MinDeadmanTTL     = 3 * time.Second
	MaxDeadmanTTL     = time.Hour
)

// CheckDeadmanTTL refuses a --deadman-ttl out of MinDeadmanTTL..MaxDeadmanTTL.
func CheckDeadmanTTL(d time.Duration) error {
	if d < MinDeadmanTTL || d > MaxDeadmanTTL {
		return fmt.Errorf("--deadman-ttl %s: want %s..%s, e.g. %s", d, flagx.Duration(MinDeadmanTTL), flagx.Duration(MaxDeadmanTTL), flagx.Duration(DefaultDeadmanTTL))
	}
	return nil
}

// DeadmanCommand is the command line of `wirelab agent deadman`, the Deadman on a shaped
// host. RemoteLink renders it (Argv) and the agent parses it (AddDeadmanFlags), both
// here, so the two sides cannot disagree on a flag's name or form.
type DeadmanCommand struct {
	TTL        time.Duration
	Renew      string // the renewal file wirelab touches
	Undo       string // the undo file (FormatUndo)
	DelayerPid string // the delay line's pid file; "" for none
}

// Argv is the command line that runs c with the wirelab binary agent.
func (c DeadmanCommand) Argv(agent string) []string {
	a := []string{agent, "agent", "deadman", "--ttl", flagx.Duration(c.TTL), "--renew", c.Renew, "--undo", c.Undo}
	if c.DelayerPid != "" {
		a = append(a, "--delayer-pid", c.DelayerPid)
	}
	return a
}

// DeadmanFlags are the switch's flags on a flag set, turned into a DeadmanCommand by
// Command.
type DeadmanFlags struct{ c DeadmanCommand }

// AddDeadmanFlags registers the flags of `wirelab agent deadman` on fs.
func AddDeadmanFlags(fs *flag.FlagSet) *DeadmanFlags {
	f := &DeadmanFlags{}
	fs.DurationVar(&f.c.TTL, "ttl", 0, "how old the renewal file's mtime may get before the undo runs")
	fs.StringVar(&f.c.Renew, "renew", "", "the renewal file wirelab touches")
	fs.StringVar(&f.c.Undo, "undo", "", "the undo file: tc, ip and iptables commands, one a line")
	fs.StringVar(&f.c.DelayerPid, "delayer-pid", "", "the delay line's pid file: the delayer it names is stopped after the undo")
	return f
}

// Command checks the parsed flags.
func (f *DeadmanFlags) Command() (DeadmanCommand, error) {
	if f.c.TTL <= 0 || f.c.Renew == "" || f.c.Undo == "" {
		return f.c, errors.New("agent deadman: --ttl, --renew and --undo are required")
	}
	return f.c, nil
}

// Run reads the undo file and watches the renewal (Deadman.Watch) until it expires or
// ctx ends, then undoes with runner.
func (c DeadmanCommand) Run(ctx context.Context, runner execx.Runner, log *slog.Logger) error {
	b, err := os.ReadFile(c.Undo)
	if err != nil {
		return fmt.Errorf("agent deadman: %w", err)
	}
	undo, err := ParseUndo(string(b))
	if err != nil {
		return fmt.Errorf("agent deadman: %w", err)
	}
	d := &Deadman{Renew: c.Renew, TTL: c.TTL, Undo: undo, DelayerPid: c.DelayerPid, Runner: runner, Log: log}
	if err := d.Watch(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("agent deadman: %w", err)
	}
	return nil
}
