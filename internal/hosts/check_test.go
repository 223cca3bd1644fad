package hosts

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// Captured from `tc qdisc show dev X` on this kernel (6.18) and a multiqueue NIC.
const (
	qdiscsDefault = "qdisc noqueue 0: root refcnt 2 \n"
	qdiscsMQ      = "qdisc mq 0: root \nqdisc fq_codel 0: parent :2 limit 10240p flows 1024 quantum 1514 target 5ms interval 100ms memory_limit 32Mb ecn drop_batch 64 \nqdisc fq_codel 0: parent :1 limit 10240p flows 1024 quantum 1514 target 5ms interval 100ms memory_limit 32Mb ecn drop_batch 64 \n"
	qdiscsOurs    = "qdisc htb 1: root refcnt 2 r2q 10 default 0 direct_packets_stat 3 direct_qlen 1000\nqdisc pfifo 10: parent 1:1 limit 100p\nqdisc ingress ffff: parent ffff:fff1 ----------------\n"
	qdiscsTBF     = "qdisc tbf 8001: root refcnt 2 rate 1Gbit burst 125000b lat 50ms \n"
)

func TestQdiscState(t *testing.T) {
	for _, c := range []struct {
		out, root string
		ingress   bool
	}{{qdiscsDefault, "noqueue", false}, {qdiscsMQ, "mq", false}, {qdiscsOurs, "htb", true}, {qdiscsTBF, "tbf", false}} {
		root, ing := qdiscState(c.out)
		if root != c.root || ing != c.ingress {
			t.Errorf("qdiscState(%q) = %q, %v; want %q, %v", c.out, root, ing, c.root, c.ingress)
		}
	}
}

func TestCheckNIC(t *testing.T) {
	ctx := context.Background()
	h := newFakeHost()
	h.Answer = map[string]string{"tc qdisc show dev eth0": qdiscsMQ}
	if err := CheckNIC(ctx, h, "eth0"); err != nil {
		t.Errorf("default NIC: %v", err)
	}
	h.Answer = map[string]string{"tc qdisc show dev eth0": qdiscsTBF}
	err := CheckNIC(ctx, h, "eth0")
	if !errors.Is(err, ErrNICBusy) || !strings.Contains(err.Error(), "host client1") || !strings.Contains(err.Error(), "tbf") {
		t.Errorf("foreign tbf: %v", err)
	}
	h.Answer = map[string]string{"tc qdisc show dev eth0": qdiscsOurs}
	if err := CheckNIC(ctx, h, "eth0"); err != nil {
		t.Errorf("wirelab's own leftover (IFB present): %v", err)
	}
	h.Fail = map[string]error{"ip link show dev wlifb-eth0": errors.New(`Device "wlifb-eth0" does not exist.`)}
	if err := CheckNIC(ctx, h, "eth0"); !errors.Is(err, ErrNICBusy) {
		t.Errorf("HTB and ingress without wirelab's IFB: %v", err)
	}
	h.Fail = map[string]error{"ip link show dev eth9": errors.New(`Device "eth9" does not exist.`)}
	h.Answer = map[string]string{"ls /sys/class/net": "eth0\nlo\n"}
	err = CheckNIC(ctx, h, "eth9")
	if !errors.Is(err, ErrNoNIC) || !strings.Contains(err.Error(), "host client1") || !strings.Contains(err.Error(), "eth0, lo") {
		t.Errorf("missing NIC: %v", err)
	}
}
