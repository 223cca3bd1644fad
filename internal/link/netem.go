package link

import (
	"context"
	"fmt"
	"strconv"

	"github.com/wirelab/wirelab/internal/execx"
)

// netem does delay, jitter and loss in the kernel where sch_netem exists. It sits at the root
// and the HTB rate cap is grafted under it (netem's class 1:1), so a packet first waits out
// its delay and then pays the rate, as on a real path where the bottleneck is at the far
// end; the netem wiki's "rate control" layout. With no cap netem is alone.
//
// netem's own limit defaults to 1000 packets, which silently drops on a long fat link (1000
// packets is 12 ms at 1 Gbit/s); it is sized to the packets in flight over the delay. With
// jitter, netem may reorder packets (its tfifo sorts by send time); the NFQUEUE delayer does
// not. This layout is planned and tested from fixtures only: the development machine has no
// sch_netem.
type netemShaper struct{}

// netemArgs are the tc arguments of the root netem qdisc of iface.
func netemArgs(iface string, c Condition) []string {
	return append([]string{"qdisc", "replace", "dev", iface, "root", "handle", "1:"}, NetemParams(c)...)
}

// NetemParams is a netem qdisc making c's delay, jitter and loss (its kind and parameters,
// after the handle): its limit holds the packets in flight over the delay.
func NetemParams(c Condition) []string {
	args := []string{"netem", "limit", strconv.Itoa(QueueLen(c.RateBps, c.Delay+c.Jitter)),
		"delay", usec(c.Delay.Microseconds())}
	if c.Jitter > 0 {
		args = append(args, usec(c.Jitter.Microseconds()))
	}
	if c.LossPct > 0 {
		args = append(args, "loss", "random", strconv.FormatFloat(c.LossPct, 'f', -1, 64)+"%")
	}
	return args
}

func usec(n int64) string { return strconv.FormatInt(n, 10) + "us" }

func (netemShaper) Setup(ctx context.Context, r execx.Runner, w Wire, c Condition) (Applied, error) {
	setOffloads(ctx, r, w, c)
	for _, ifc := range w.Ifaces {
		if _, err := inNS(ctx, r, w.NS, "tc", netemArgs(ifc, c)...); err != nil {
			return Applied{}, fmt.Errorf("netem on %s: %w", ifc, err)
		}
	}
	if err := setupRate(ctx, r, w, c, "1:1", "2"); err != nil {
		return Applied{}, err
	}
	rb, err := readBackTC(ctx, r, w)
	if err != nil {
		return Applied{}, err
	}
	return Applied{Shaper: Made(!c.Unlimited(), ShaperNetem), ReadBack: rb}, nil
}

func (netemShaper) Teardown(ctx context.Context, r execx.Runner, w Wire) error {
	return delRoot(ctx, r, w)
}
