package metrics

import (
	"os"
	"path/filepath"
	"testing"
)

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Fixtures were captured on the reference machine: the host's /proc/net/dev, and the one
// of a namespace after iperf3 sent 1 MB through a veth (netdev_netns.txt, iplink_netns.json).
func TestParseNetDev(t *testing.T) {
	tests := []struct {
		file  string
		ifs   int
		name  string
		wants IfaceCounters
	}{
		{"netdev_host.txt", 5, "eth0", IfaceCounters{RxBytes: 271578618, RxPackets: 8314, TxBytes: 585795, TxPackets: 5712}},
		{"netdev_host.txt", 5, "ifbtest", IfaceCounters{}},
		{"netdev_netns.txt", 2, "wlxa", IfaceCounters{RxBytes: 3708, RxPackets: 50, TxBytes: 1052714, TxPackets: 54}},
	}
	for _, tc := range tests {
		t.Run(tc.file+"/"+tc.name, func(t *testing.T) {
			got, err := ParseNetDev(readFixture(t, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != tc.ifs {
				t.Errorf("got %d interfaces %v, want %d", len(got), got, tc.ifs)
			}
			c, ok := got[tc.name]
			if !ok || c != tc.wants {
				t.Errorf("%s = %+v (present %v), want %+v", tc.name, c, ok, tc.wants)
			}
		})
	}
}

func TestParseNetDevErrors(t *testing.T) {
	hdr := "Inter-|   Receive\n face |bytes\n"
	for name, in := range map[string]string{
		"no colon":     hdr + "eth0 1 2 3\n",
		"short":        hdr + "eth0: 1 2 3\n",
		"not a number": hdr + "eth0: 1 2 3 4 5 6 7 8 x 10 11 12 13 14 15 16\n",
	} {
		if _, err := ParseNetDev([]byte(in)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// Large counters abut the colon in the kernel's "%6s:%8llu" format.
func TestParseNetDevWideCounter(t *testing.T) {
	in := "h1\nh2\n  eth0:123456789012 7 0 0 0 0 0 0 99 8 0 0 0 0 0 0\n"
	got, err := ParseNetDev([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if c := got["eth0"]; c.RxBytes != 123456789012 || c.TxBytes != 99 || c.TxPackets != 8 {
		t.Errorf("eth0 = %+v", c)
	}
}

func TestParseIPLinkJSONMatchesNetDev(t *testing.T) {
	ip, err := parseIPLinkJSON(readFixture(t, "iplink_netns.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := IfaceCounters{RxBytes: 3708, RxPackets: 50, TxBytes: 1052714, TxPackets: 54}
	if ip["wlxa"] != want {
		t.Errorf("wlxa = %+v, want %+v (same namespace as netdev_netns.txt)", ip["wlxa"], want)
	}
	if _, err := parseIPLinkJSON([]byte(`[{"ifname":"lo"}]`)); err == nil {
		t.Error("no error for output without -s counters")
	}
}

func TestParseStatBusy(t *testing.T) {
	got, err := parseStatBusy(readFixture(t, "stat.txt"))
	if err != nil {
		t.Fatal(err)
	}
	// cpu  6682 0 3135 54087 575 0 197 601 0 0: user+nice+system+irq+softirq+steal.
	if want := uint64(6682 + 0 + 3135 + 0 + 197 + 601); got != want {
		t.Errorf("busy = %d, want %d", got, want)
	}
	if _, err := parseStatBusy([]byte("intr 1 2\n")); err == nil {
		t.Error("no error without a cpu line")
	}
}

func TestClkTck(t *testing.T) {
	if got := clkTck(); got != 100 {
		t.Errorf("CLK_TCK = %v; every Linux arch Go supports uses 100", got)
	}
}
