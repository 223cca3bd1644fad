package remote

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/hosts"
	"github.com/wirelab/wirelab/internal/inventory"
	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/study"
)

// twoClients is testInventory with a second client, app2, whose NIC is eth2.
func twoClients(t *testing.T, out *bytes.Buffer) Options {
	t.Helper()
	o := dryOptions(t, out)
	y := strings.Replace(testInventory, "  - name: db\n", "  - name: app2\n    role: client\n    address: 198.18.20.3\n    nic: eth2\n  - name: db\n", 1)
	inv, err := inventory.Parse([]byte(y), "/root")
	if err != nil {
		t.Fatal(err)
	}
	inv.Path = "hosts.yaml"
	o.Inventory = inv
	return o
}

func runOn(threads ...int) *study.Run {
	return study.NewRun(study.RunOptions{Bench: study.Bench{Threads: threads, Duration: time.Second, Tables: 1,
		TableSize: 10, Repeat: 1, Workload: "oltp_read_only", Engine: engine.MariaDB},
		Link: link.Condition{RateBps: 20_000_000}})
}

// threadsOn lists, in plan order, "host --threads=N" of every sysbench run.
func threadsOn(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		host, cmd, ok := strings.Cut(l, ": stream: ")
		if !ok || !strings.HasPrefix(cmd, "sysbench ") || !strings.HasSuffix(cmd, " run") {
			continue
		}
		for _, f := range strings.Fields(cmd) {
			if strings.HasPrefix(f, "--threads=") {
				out = append(out, host+" "+f)
			}
		}
	}
	return out
}

// The plan of a run from two clients: both NICs checked and shaped toward the server,
// each under its own switch; each point's sysbench on both clients with its share of the
// threads (the remainder on the first), a sample agent on each client for its own
// classes and one on the server; both NICs undone at the end.
func TestDryRunTwoClientsSplitsEachPoint(t *testing.T) {
	var out bytes.Buffer
	if err := DryRun(context.Background(), twoClients(t, &out), runOn(3, 8)); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	want := []string{"app --threads=2", "app2 --threads=1", "app --threads=4", "app2 --threads=4"}
	if got := threadsOn(text); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("sysbench runs:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	assertPrints(t, text,
		"app: ip link show dev eth1", "app2: ip link show dev eth2",
		"app: tc class replace dev eth1 parent 1: classid 1:1 htb rate 20000000bit",
		"app2: tc class replace dev eth2 parent 1: classid 1:1 htb rate 20000000bit",
		"app2: stream: /tmp/wirelab-XXXXXX/wirelab agent sample --every 1s --for 6h --up-class eth2:1:1 --down-class wlifb-eth2:1:1 --comm sysbench",
		"app: stream: /tmp/wirelab-XXXXXX/wirelab agent sample --every 1s --for 6h --up-class eth1:1:1 --down-class wlifb-eth1:1:1 --comm sysbench",
		"app: tc qdisc del dev eth1 root", "app2: tc qdisc del dev eth2 root",
	)
	for _, h := range []string{"app", "app2"} {
		if n := strings.Count(text, h+": start deadman: setsid -f /tmp/wirelab-XXXXXX/wirelab agent deadman"); n != 1 {
			t.Errorf("%s: %d dead-man switches started, want 1:\n%s", h, n, text)
		}
	}
	// The server is sampled once per point, not once per client.
	if n := strings.Count(text, "db: stream: /tmp/wirelab-XXXXXX/wirelab agent sample"); n != 2 {
		t.Errorf("%d server sample agents for 2 points, want 2", n)
	}
}

// Refused before any host is contacted: fewer threads than clients, and a study that
// loads from one client host.
func TestTwoClientsRefusals(t *testing.T) {
	for _, c := range []struct {
		name string
		st   study.Study
		want string
	}{
		{"threads below clients", runOn(1, 8), "--threads 1: fewer threads than the 2 client hosts"},
		{"transport", transport("remote-tcp"), "2 client hosts (app, app2): this study loads the server from one client host"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			err := DryRun(context.Background(), twoClients(t, &out), c.st)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("want an error with %q, got %v", c.want, err)
			}
			if out.Len() > 0 {
				t.Errorf("a refused study contacted the hosts:\n%s", out.String())
			}
		})
	}
}

// `down --hosts` undoes every client's NIC, delay line and switch, not only the first's.
func TestDownCleansEveryClient(t *testing.T) {
	var out bytes.Buffer
	if err := Down(context.Background(), twoClients(t, &out)); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	assertPrints(t, text, "app: sh -c 'ls -d /tmp/wirelab-*/wirelab-run", "app2: sh -c 'ls -d /tmp/wirelab-*/wirelab-run",
		"db: sh -c 'ls -d /tmp/wirelab-*/wirelab-run", "app: tc qdisc del dev eth1 root", "app2: tc qdisc del dev eth2 root",
		"app2: ip link del wlifb-eth2", "/run/wirelab-deadman/app@eth1", "/run/wirelab-deadman/app2@eth2")
}

// Two clients of one machine (sharing its /run) that shape NICs of one name, or two in
// one network stack, are refused by name before anything is made; clients of one machine
// with NICs of their own, and clients a dry run cannot place, pass.
func TestClientsThatWouldShapeEachOtherAreRefused(t *testing.T) {
	cl := func(name, nic string) *host { return &host{inv: inventory.Host{Name: name, NIC: nic}} }
	m1a := hosts.Place{Boot: "b1", Run: "0:25:1", Net: "net:[401]"}
	m1b := hosts.Place{Boot: "b1", Run: "0:25:1", Net: "net:[402]"}
	m2 := hosts.Place{Boot: "b2", Run: "0:25:1", Net: "net:[401]"}
	for _, tc := range []struct {
		name   string
		nics   [2]string
		places [2]hosts.Place
		want   string
	}{
		{"two machines, one NIC name", [2]string{"eth0", "eth0"}, [2]hosts.Place{m1a, m2}, ""},
		{"one machine, NICs of their own", [2]string{"eth0", "eth1"}, [2]hosts.Place{m1a, m1b}, ""},
		{"one machine, one NIC name", [2]string{"eth0", "eth0"}, [2]hosts.Place{m1a, m1b},
			"hosts.yaml: clients c1 and c2 are one machine (they share its /run) and both shape a NIC named eth0"},
		{"one network stack", [2]string{"eth0", "eth1"}, [2]hosts.Place{m1a, m1a},
			"hosts.yaml: clients c1 and c2 are one network stack (network namespace net:[401] of one machine)"},
		{"a dry run's hosts", [2]string{"eth0", "eth0"}, [2]hosts.Place{{}, {}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := samePlaces("hosts.yaml", []*host{cl("c1", tc.nics[0]), cl("c2", tc.nics[1])}, tc.places[:])
			if (tc.want == "") != (err == nil) || (err != nil && !strings.HasPrefix(err.Error(), tc.want)) {
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
}

// The dry run of two clients shows each one's place read, before anything is staged.
func TestDryRunReadsWhereTwoClientsRun(t *testing.T) {
	var out bytes.Buffer
	if err := DryRun(context.Background(), twoClients(t, &out), runOn(2)); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	place := strings.Index(text, "app2: sh -c 'cat /proc/sys/kernel/random/boot_id; stat -L -c %d:%i /run; readlink /proc/self/ns/net'")
	stage := strings.Index(text, "app: mktemp")
	if place < 0 || stage < 0 || place > stage {
		t.Errorf("want app2's place read before anything is staged (at %d, staging at %d):\n%s", place, stage, text)
	}
}
