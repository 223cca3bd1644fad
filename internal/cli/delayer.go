package cli

import (
	"errors"

	"github.com/wirelab/wirelab/internal/link"
)

// cmdDelayer is the NFQUEUE delayer inside the wire host (link.Apply starts it with
// --detach). The command itself lives in the link package so its tests run the same code.
func cmdDelayer(p *Process, args []string) error {
	fs := newFlagSet(p, "__delayer", "internal: hold forwarded packets from NFQUEUE for a delay (run inside the wire host)",
		"ip netns exec wl-x-wire wirelab __delayer --queue 100,101 --delay 20ms --jitter 1ms --loss 0.1")
	d := link.AddDelayerFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	ctx, stop := untilInterrupt(p) // SIGTERM from link.Clear: release what is held, then exit
	defer stop()
	err := d.Run(ctx, p.Self, args, p.Stdout, p.Logger.With("component", "delayer"))
	if errors.Is(err, link.ErrBadFlag) {
		return &UsageError{err}
	}
	return err
}
