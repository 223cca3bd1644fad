package link

import (
	"slices"
	"strconv"
	"testing"
	"time"
)

// argAfter is the value following key in a tc command line.
func argAfter(t *testing.T, args []string, key string) string {
	t.Helper()
	i := slices.Index(args, key)
	if i < 0 || i+1 >= len(args) {
		t.Fatalf("%q not in %v", key, args)
	}
	return args[i+1]
}

// The description carries the numbers the shapers put into tc and the delayer.
func TestDirectionsMatchWhatIsApplied(t *testing.T) {
	toward := map[string]string{"server": "to-server", "client": "to-client"}
	c := Condition{RateBps: 20_000_000, Delay: 5 * time.Millisecond, Jitter: time.Millisecond, LossPct: 0.1}
	ds := Directions(c, "htb+nfqueue", toward)
	if len(ds) != 2 || ds[0].Toward != "client" || ds[0].Iface != "to-client" || ds[1].Toward != "server" {
		t.Fatalf("directions %+v", ds)
	}
	plan := htbPlan("to-server", "root", "1", c)
	d := ds[1]
	if got := strconv.Itoa(d.BurstBytes) + "b"; got != argAfter(t, plan[1], "burst") {
		t.Errorf("burst %s, tc gets %s", got, argAfter(t, plan[1], "burst"))
	}
	if got := strconv.Itoa(d.QueuePackets); got != argAfter(t, plan[2], "limit") {
		t.Errorf("queue %s, tc gets %s", got, argAfter(t, plan[2], "limit"))
	}
	_, dargs := delayerArgs(Wire{NS: "w", Ifaces: []string{"to-server"}, Self: "/wirelab"}, c)
	if got := strconv.Itoa(d.DelayQueuePackets); got != argAfter(t, dargs, "--max-queue") {
		t.Errorf("delay queue %s, the delayer gets %s", got, argAfter(t, dargs, "--max-queue"))
	}
	if netem := netemArgs("to-server", c); strconv.Itoa(d.DelayQueuePackets) != argAfter(t, netem, "limit") {
		t.Errorf("delay queue %d, netem gets %s", d.DelayQueuePackets, argAfter(t, netem, "limit"))
	}
	if d.RateBps != 20_000_000 || d.DelayMs != 5 || d.JitterMs != 1 || d.LossPct != 0.1 || d.Shaper != "htb+nfqueue" {
		t.Errorf("condition %+v", d)
	}
}

func TestDirectionsRateOnlyAndUnlimited(t *testing.T) {
	toward := map[string]string{"server": "to-server"}
	// 20 Mbit/s without delay: burst 25 kB, queue 100 packets, no delay line.
	d := Directions(Condition{RateBps: 20_000_000}, "htb", toward)[0]
	if d.BurstBytes != 25_000 || d.QueuePackets != 100 || d.DelayQueuePackets != 0 {
		t.Errorf("20mbit: %+v", d)
	}
	d = Directions(Condition{}, "none", toward)[0]
	if d.BurstBytes != 0 || d.QueuePackets != 0 || d.DelayQueuePackets != 0 || d.RateBps != 0 {
		t.Errorf("unlimited: %+v", d)
	}
	d = Directions(Condition{Delay: 20 * time.Millisecond}, "nfqueue", toward)[0]
	if d.BurstBytes != 0 || d.DelayQueuePackets == 0 || d.DelayMs != 20 {
		t.Errorf("delay only: %+v", d)
	}
}
