package hosts

import (
	"context"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/link"
)

// fixture is a capture of real tc and iptables output (link's testdata).
func fixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("../link/testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// readBackOf is what the read-back script prints on a host whose devices show these
// captures ("" = the device is gone) and whose delay line is in the state given.
func readBackOf(t *testing.T, nic, ifb [2]string, rules string, delayer bool) string {
	t.Helper()
	var b strings.Builder
	for _, d := range []struct {
		name string
		q    [2]string
	}{{"eth0", nic}, {"wlifb-eth0", ifb}} {
		qd, cl := `Cannot find device "`+d.name+`"`+"\n", `Cannot find device "`+d.name+`"`+"\n"
		if d.q[0] != "" {
			qd, cl = fixture(t, d.q[0]), fixture(t, d.q[1])
		}
		b.WriteString(readMark + "qdisc " + d.name + "\n" + qd + readMark + "class " + d.name + "\n" + cl)
	}
	if rules != "" {
		b.WriteString(readMark + "rules\n" + rules + readMark + "delayer\n")
		if delayer {
			b.WriteString("running\n")
		}
	}
	return b.String()
}

var (
	shapedNIC  = [2]string{"tc_qdisc_shaped_nic_iproute2-6.1.txt", "tc_class_shaped_nic_iproute2-6.1.txt"}
	shapedIFB  = [2]string{"tc_qdisc_shaped_ifb_iproute2-6.1.txt", "tc_class_shaped_ifb_iproute2-6.1.txt"}
	clearedNIC = [2]string{"tc_qdisc_cleared_veth_iproute2-6.1.txt", "tc_class_cleared_veth_iproute2-6.1.txt"}
)

func TestReadComparesTheHostWithThePlan(t *testing.T) {
	rate := link.Condition{RateBps: 20_000_000}
	delay := link.Condition{RateBps: 20_000_000, Delay: 5 * time.Millisecond}
	rules := fixture(t, "iptables_mangle_delay_line.txt")
	for _, tc := range []struct {
		name     string
		c        link.Condition
		out      string
		problems []string
		classes  int
	}{
		{"as shaped", rate, readBackOf(t, shapedNIC, shapedIFB, "", false), nil, 2},
		{"qdiscs and IFB removed", rate, readBackOf(t, clearedNIC, [2]string{}, "", false),
			[]string{"its HTB class 1:1 on eth0 is gone (qdisc noqueue)", "device wlifb-eth0 is gone"}, 0},
		{"delay line as shaped", delay, readBackOf(t, shapedNIC, shapedIFB, rules, true), nil, 2},
		{"delayer dead, jumps gone", delay, readBackOf(t, shapedNIC, shapedIFB, strings.ReplaceAll(rules, "-A OUTPUT -j WIRELAB-DELAY\n", ""), false),
			[]string{"the jump from OUTPUT to WIRELAB-DELAY is gone", "its delay line's delayer is not running"}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newFakeHost()
			l := testLink(h)
			l.Target.NFQueue, l.Target.KeepPorts = true, []uint16{22}
			if err := l.Shape(context.Background(), tc.c); err != nil {
				t.Fatal(err)
			}
			h.Answer = map[string]string{"sh -c echo '" + readMark: tc.out}
			r, err := l.Read(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(r.Problems, tc.problems) || r.Classes != tc.classes {
				t.Errorf("problems %q, %d classes; want %q, %d", r.Problems, r.Classes, tc.problems, tc.classes)
			}
			if tc.classes == 2 && r.Bytes != 4900+2940 {
				t.Errorf("counted %d bytes, want the two classes' 7840", r.Bytes)
			}
			cmd := h.lines()[len(h.lines())-1]
			for _, w := range []string{"tc qdisc show dev eth0", "tc -s class show dev wlifb-eth0"} {
				if !strings.Contains(cmd, w) {
					t.Errorf("the read-back lacks %q: %s", w, cmd)
				}
			}
			if got := strings.Contains(cmd, "iptables -t mangle -S"); got != tc.c.NeedsDelayLine() {
				t.Errorf("delay line %v, reads its rules %v: %s", tc.c.NeedsDelayLine(), got, cmd)
			}
		})
	}
}

func TestReadBeforeAnyShapeFindsNothingMissing(t *testing.T) {
	h := newFakeHost()
	r, err := testLink(h).Read(context.Background())
	if err != nil || r.Problems != nil || r.Classes != 0 || len(h.lines()) != 0 {
		t.Errorf("%+v, %v, ran %q", r, err, h.lines())
	}
}
