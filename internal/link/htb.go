package link

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/wirelab/wirelab/internal/execx"
)

// HTB caps the bandwidth. One class per interface at rate = ceil = the cap; no class at all
// when the rate is unlimited.

const (
	frameBytes  = 1514                  // a full Ethernet frame as HTB counts it (skb length with L2 header)
	burstFloor  = 2 * frameBytes        // HTB's default (~1600 B) under-delivers on a loaded veth
	burstWindow = 10 * time.Millisecond // the burst covers this much traffic at the rate
)

// HTBBurst is the burst (and cburst) in bytes for a rate: max(2 frames, rate·10ms). A burst
// smaller than the traffic between two late watchdog wake-ups makes HTB under-deliver: on
// an idle 2-core VM, iperf3 through a 50 Mbit/s cap got 0.952 of the payload ceiling with a
// 4 ms burst and 0.996 with ~10 ms (0.84-0.91 with 1 ms under load).
func HTBBurst(rateBps int64) int {
	return max(burstFloor, int(math.Ceil(float64(rateBps)/8*burstWindow.Seconds())))
}

// HTBLeafLimit is the leaf queue length in packets: two bandwidth-delay products of the asked
// RTT plus 60 ms of traffic, at least 100 and at most 100000. The wire shapes forwarded
// traffic, so a sender gets no local backpressure (TCP small queues release an skb as soon
// as the veth takes it) and only drops slow it down. A queue of one bandwidth-delay product
// overflows in bursts behind the delayer (slow-start overshoot, then retransmits), and
// 20 ms of queue drops packets even without delay; the measurements behind the sizing are
// in docs/bench-link.md.
func HTBLeafLimit(rateBps int64, delay time.Duration) int {
	hold := 4*delay + 60*time.Millisecond
	n := int(math.Ceil(float64(rateBps) / 8 * hold.Seconds() / frameBytes))
	return min(max(n, 100), 100_000)
}

// HTBQuantum is the class quantum in bytes for a rate: it keeps HTB from warning that the
// quantum derived from r2q is out of range.
func HTBQuantum(rateBps int64) int { return min(max(int(rateBps/8/10), frameBytes), 200_000) }

// htbPlan returns the tc commands (arguments after "tc") that put the lab's HTB rate cap on
// iface under parent ("root" or a netem class) with the given handle major ("1", "2"):
// everything goes through the capped class.
func htbPlan(iface, parent, major string, c Condition) [][]string {
	return HTBPlan(iface, parent, major, "1", c.RateBps, PfifoLeaf(c))
}

// HTBPlan returns the tc commands (arguments after "tc") of one HTB rate cap on dev under
// parent ("root" or a class), handle major ("1", "2"): the qdisc, whose unclassified
// traffic goes to class dflt ("1": the capped class; "0": HTB's direct queue, unshaped, as
// a real NIC's other traffic must be), its one class major:1 at rateBps with the lab's
// burst and quantum, and that class's leaf major0: (leaf is its kind and parameters:
// PfifoLeaf, or NetemParams for delay in the kernel). The lab and real hosts both shape
// with it.
func HTBPlan(dev, parent, major, dflt string, rateBps int64, leaf []string) [][]string {
	burst := strconv.Itoa(HTBBurst(rateBps)) + "b"
	rate := strconv.FormatInt(rateBps, 10) + "bit"
	return [][]string{
		append(append([]string{"qdisc", "replace", "dev", dev}, parentArgs(parent)...),
			"handle", major+":", "htb", "default", dflt),
		{"class", "replace", "dev", dev, "parent", major + ":", "classid", major + ":1", "htb",
			"rate", rate, "ceil", rate, "burst", burst, "cburst", burst,
			"quantum", strconv.Itoa(HTBQuantum(rateBps))},
		append([]string{"qdisc", "replace", "dev", dev, "parent", major + ":1", "handle", major + "0:"}, leaf...),
	}
}

// PfifoLeaf is the leaf of a rate cap whose delay, if any, is made elsewhere: a FIFO of
// HTBLeafLimit packets.
func PfifoLeaf(c Condition) []string {
	return []string{"pfifo", "limit", strconv.Itoa(HTBLeafLimit(c.RateBps, c.Delay))}
}

// parentArgs is how tc names a qdisc's place: "root" or "parent X:Y".
func parentArgs(parent string) []string {
	if parent == "root" {
		return []string{"root"}
	}
	return []string{"parent", parent}
}

// OffloadMinRate is the cap from which the lab keeps segmentation offloads on. Below it the
// hosts send MTU-sized frames, so HTB and the delay line see frames rather than bursts. From
// it up (and with no cap) frames would cost the delayer one netlink round trip each, ~80 kpps
// at 1 Gbit/s, which a shared 2-core machine cannot carry; with offloads on, TCP sends
// super-packets of about 1 ms of traffic (tcp_tso_autosize), which is 4 ms below HTB's burst.
const OffloadMinRate = 500_000_000

// Offloads reports whether the hosts and the wire keep TSO/GSO on under c.
func Offloads(c Condition) bool { return c.Unlimited() || c.RateBps >= OffloadMinRate }

// setOffloads turns segmentation offloads on the shaped interfaces off (or on, see Offloads).
// Some drivers fix a feature; that is not an error worth failing for.
func setOffloads(ctx context.Context, r execx.Runner, w Wire, c Condition) {
	v := "off"
	if Offloads(c) {
		v = "on"
	}
	for _, ifc := range w.Ifaces {
		_, _ = inNS(ctx, r, w.NS, "ethtool", "-K", ifc, "tso", v, "gso", v, "gro", v)
	}
}

// setupRate caps every interface of w with HTB under parent, handle major.
func setupRate(ctx context.Context, r execx.Runner, w Wire, c Condition, parent, major string) error {
	if c.Unlimited() {
		return nil
	}
	for _, ifc := range w.Ifaces {
		for _, args := range htbPlan(ifc, parent, major, c) {
			if _, err := inNS(ctx, r, w.NS, "tc", args...); err != nil {
				return fmt.Errorf("cap %s at %s: %w", ifc, FormatRate(c.RateBps), err)
			}
		}
	}
	return nil
}

// htbShaper is the rate-only shaper: used when the condition has no delay, jitter or loss.
type htbShaper struct{}

func (htbShaper) Setup(ctx context.Context, r execx.Runner, w Wire, c Condition) (Applied, error) {
	if c.NeedsDelayLine() {
		return Applied{}, fmt.Errorf("htb shapes rate only, not %s", c)
	}
	a := Applied{Shaper: Made(!c.Unlimited(), "")}
	if c.Unlimited() {
		return a, nil
	}
	setOffloads(ctx, r, w, c)
	if err := setupRate(ctx, r, w, c, "root", "1"); err != nil {
		return Applied{}, err
	}
	rb, err := readBackTC(ctx, r, w)
	if err != nil {
		return Applied{}, err
	}
	a.ReadBack = rb
	return a, nil
}

func (htbShaper) Teardown(ctx context.Context, r execx.Runner, w Wire) error {
	return delRoot(ctx, r, w)
}
