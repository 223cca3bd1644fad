package remote

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/inventory"
	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/study"
)

const testInventory = `known_hosts: /nonexistent/known_hosts
defaults:
  user: root
hosts:
  - name: app
    role: client
    address: 198.18.20.1
    nic: eth1
  - name: db
    role: server
    address: 198.18.20.2
    port: 2222
    data_address: 198.18.21.2
    server:
      start: mariadb
`

func dryOptions(t *testing.T, out *bytes.Buffer) Options {
	t.Helper()
	inv, err := inventory.Parse([]byte(testInventory), "/root")
	if err != nil {
		t.Fatal(err)
	}
	inv.Path = "hosts.yaml"
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return Options{Inventory: inv, DryRun: out, Self: self, TTL: 30 * time.Second}
}

func bandwidth(kind engine.Kind) *study.Bandwidth {
	return study.NewBandwidth(study.BandwidthOptions{
		Bench: study.Bench{Threads: []int{1, 16}, Duration: time.Second, Tables: 1, TableSize: 10, Repeat: 1,
			Workload: "oltp_read_only", RandType: "pareto", Engine: kind},
		Slow: link.Condition{RateBps: 20_000_000}, Fast: link.Condition{}, Experiments: []string{"n1"}})
}

// The dry run prints, host by host, the whole life of a study on real hosts and contacts
// nobody: staging, the dead-man switch armed before the NIC is touched, each link shaped
// toward the server's data address only with the SSH port kept out, the server's agent,
// and the teardown in reverse.
func TestDryRunPrintsEveryRemoteStep(t *testing.T) {
	var out bytes.Buffer
	if err := DryRun(context.Background(), dryOptions(t, &out), bandwidth(engine.MariaDB)); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	want := []string{
		"app: ip link show dev eth1",                                           // the NIC exists
		"db: sh -c 'command -v mariadbd",                                       // the programs
		"app: mktemp -d /tmp/wirelab-XXXXXX",                                   // staging
		"agent deadman --ttl 30s",                                              // the switch before the shaping
		"tc class replace dev eth1 parent 1: classid 1:1 htb rate 20000000bit", // the slow link
		"match ip dst 198.18.21.2/32 match ip protocol 6 0xff match ip dport 22 0xffff flowid 1:",
		"match ip dst 198.18.21.2/32 match ip protocol 6 0xff match ip dport 2222 0xffff flowid 1:",
		"rate 100000000000bit", // the unlimited link keeps its counting classes
		"agent mariadb --dir /tmp/wirelab-XXXXXX/mariadb --bind 198.18.21.2",
		"app: tc qdisc del dev eth1 root",
		"rm -rf -- /tmp/wirelab-XXXXXX",
	}
	assertPrints(t, text, want...)
	if i, j := strings.Index(text, "agent deadman"), strings.Index(text, "tc qdisc replace dev eth1 root"); i < 0 || j < 0 || i > j {
		t.Errorf("the dead-man switch must be armed before the NIC is shaped:\n%s", text)
	}
}

// With delay, a dry run shows the delay line a client without netem gets: the probes,
// the delayer started from the staged binary, and the rules that queue only the flows
// with the server's data address, both SSH ports returned first; its teardown removes
// them.
func TestDryRunPrintsTheDelayLine(t *testing.T) {
	var out bytes.Buffer
	st := study.NewBandwidth(study.BandwidthOptions{
		Bench: study.Bench{Threads: []int{1}, Duration: time.Second, Tables: 1, TableSize: 10, Repeat: 1,
			Workload: "oltp_read_only", RandType: "pareto", Engine: engine.MariaDB},
		Slow: link.Condition{RateBps: 20_000_000, Delay: 10 * time.Millisecond}, Fast: link.Condition{Delay: 10 * time.Millisecond},
		Experiments: []string{"n1"}})
	if err := DryRun(context.Background(), dryOptions(t, &out), st); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	want := []string{
		"app: tc qdisc add dev wlprobe0 root netem delay 1ms",
		"app: # a dry run does not know whether this kernel has netem",
		"app: iptables -t mangle -A WIRELAB-PROBE -j NFQUEUE --queue-num 0",
		"--delayer-pid /run/wirelab-delayer-eth1.pid",
		"app: /tmp/wirelab-XXXXXX/wirelab __delayer --detach --queue 100,101 --delay 10ms",
		"app: iptables -t mangle -A WIRELAB-DELAY -p tcp --dport 2222 -j RETURN",
		"app: iptables -t mangle -A WIRELAB-DELAY -d 198.18.21.2 -j NFQUEUE --queue-num 100",
		"app: iptables -t mangle -A WIRELAB-DELAY -s 198.18.21.2 -j NFQUEUE --queue-num 101",
		"app: iptables -t mangle -I OUTPUT 1 -j WIRELAB-DELAY",
		"app: iptables -t mangle -X WIRELAB-DELAY",
	}
	assertPrints(t, text, want...)
	if strings.Contains(text, "handle 10: netem") {
		t.Errorf("the delay line's plan has no netem leaf:\n%s", text)
	}
}

// assertPrints fails for each of want that the dry run's text lacks.
func assertPrints(t *testing.T, text string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("dry run lacks %q:\n%s", w, text)
		}
	}
}

func TestOpenRefusesWhatRealHostsDoNotRun(t *testing.T) {
	var out bytes.Buffer
	o := dryOptions(t, &out)
	_, err := Open(context.Background(), o, bandwidth(engine.Postgres).Needs())
	if err == nil || !strings.Contains(err.Error(), "host db starts mariadb") || !strings.Contains(err.Error(), "set start: postgres there") {
		t.Errorf("PostgreSQL on a host that starts MariaDB: %v, want a refusal naming both", err)
	}
	pgb := bandwidth(engine.Postgres).Needs()
	pgb.Data.Driver = study.DriverPgbench
	if _, err := Open(context.Background(), postgresOptions(t, &out), pgb); err == nil || !strings.Contains(err.Error(), "--driver pgbench") {
		t.Errorf("pgbench on real hosts: %v, want a refusal naming --driver pgbench", err)
	}
	tunnelled := study.NewBandwidth(study.BandwidthOptions{Bench: study.Bench{Threads: []int{1}, Duration: time.Second,
		Tables: 1, TableSize: 10, Repeat: 1, Workload: "oltp_read_only", RandType: "pareto", Engine: engine.Postgres},
		Slow: link.Condition{RateBps: 20_000_000}, Experiments: []string{"n1", "n2"}}).Needs()
	var plan bytes.Buffer
	if _, err := Open(context.Background(), postgresOptions(t, &plan), tunnelled); err != nil {
		t.Errorf("N2 on PostgreSQL (the tunnel's ends on the hosts) on real hosts: %v", err)
	}
	if !strings.Contains(plan.String(), "command -v ss") {
		t.Errorf("the tunnel's hosts are not checked for ss, which its start waits with:\n%s", plan.String())
	}
	needs := bandwidth(engine.MariaDB).Needs()
	needs.Hosts = []string{"replica", "server"}
	if _, err := Open(context.Background(), o, needs); err == nil || !strings.Contains(err.Error(), "`study transport`, `study replication` and `study sync`") {
		t.Errorf("a replica study on real hosts: %v, want a refusal naming the studies that run there", err)
	}
	if out.Len() != 0 && strings.Contains(out.String(), "tc qdisc replace") {
		t.Errorf("a refused study changed a NIC:\n%s", out.String())
	}
}

func TestKeepPortsAreEachHostsSSHPortOnce(t *testing.T) {
	got := keepPorts(inventory.Host{Access: inventory.Access{Port: 22}}, inventory.Host{Access: inventory.Access{Port: 2222}}, inventory.Host{Access: inventory.Access{Port: 22}})
	if len(got) != 2 || got[0] != 22 || got[1] != 2222 {
		t.Errorf("keepPorts = %v, want [22 2222]", got)
	}
}

// A login user other than root: the plan shows the login check, run as that user before
// anything is copied, and every later command going through sudo -n.
func TestDryRunWithASudoUser(t *testing.T) {
	var out bytes.Buffer
	o := dryOptions(t, &out)
	inv, err := inventory.Parse([]byte(strings.Replace(testInventory, "user: root", "user: alice", 1)), "/home/alice")
	if err != nil {
		t.Fatal(err)
	}
	inv.Path = "hosts.yaml"
	o.Inventory = inv
	if err := DryRun(context.Background(), o, bandwidth(engine.MariaDB)); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	assertPrints(t, text, "app: as alice: sudo -n sh -c 'id -u'", "db: as alice: sudo -n sh -c 'id -u'",
		"app: sudo -n ip link show dev eth1", "db: sudo -n copy ", "app: sudo -n tc qdisc del dev eth1 root")
	if i, j := strings.Index(text, "db: as alice: sudo -n"), strings.Index(text, "copy "); i < 0 || j < 0 || i > j {
		t.Errorf("the login check must come before anything is copied:\n%s", text)
	}
}

func transport(paths ...string) *study.Transport {
	return study.NewTransport(study.TransportOptions{Paths: paths, Link: link.Condition{Delay: 100 * time.Microsecond},
		Bench: study.Bench{Threads: []int{1, 4}, Duration: 3 * time.Second, Tables: 1, TableSize: 10, Repeat: 1,
			Workload: "oltp_read_only", RandType: "pareto", Engine: engine.MariaDB}})
}

// runsOn are the sysbench runs of a dry run's text, each as "HOST TARGET": the host that
// runs it and the flag that says where it connects.
func runsOn(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		host, cmd, ok := strings.Cut(l, ": stream: ")
		if !ok || !strings.HasPrefix(cmd, "sysbench ") || !strings.HasSuffix(cmd, " run") {
			continue
		}
		for _, f := range strings.Fields(cmd) {
			if strings.HasPrefix(f, "--mysql-socket=") || strings.HasPrefix(f, "--mysql-host=") {
				out = append(out, host+" "+f)
			}
		}
	}
	return out
}

// The transport study's plan on real hosts: the socket rows' sysbench on the server host
// (its socket, 127.0.0.1, which the server then listens on too), the TCP rows' on the
// client across the link to the server's data address, the socat row's on the client
// through a hop on each host; socat is checked on both before anything is copied; a third
// sample agent watches sysbench where it runs on the server host; the hops stop before
// the server at the end.
func TestDryRunTransportRunsEachPathOnItsHost(t *testing.T) {
	var out bytes.Buffer
	if err := DryRun(context.Background(), dryOptions(t, &out), transport(study.TransportPaths...)); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	const dir = "/tmp/wirelab-XXXXXX"
	wantRuns := []string{}
	for range 2 { // threads 1, 4
		wantRuns = append(wantRuns,
			"db --mysql-socket="+dir+"/mariadb/mysqld.sock",
			"db --mysql-host=127.0.0.1",
			"app --mysql-host=198.18.21.2",
			"app --mysql-socket="+dir+"/remote-socket/server.sock")
	}
	if got := runsOn(text); strings.Join(got, "\n") != strings.Join(wantRuns, "\n") {
		t.Errorf("sysbench runs (host, target):\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantRuns, "\n"))
	}
	assertPrints(t, text,
		"app: sh -c 'command -v socat || [ -x /usr/sbin/socat ]'",
		"db: sh -c 'command -v socat || [ -x /usr/sbin/socat ]'",
		"agent mariadb --dir "+dir+"/mariadb --bind 198.18.21.2,127.0.0.1 ",
		"db: stream: sysbench oltp_read_only --db-driver=mysql --mysql-socket="+dir+"/mariadb/mysqld.sock",
		"db: start socat-server: setsid -f socat TCP-LISTEN:3307,bind=198.18.21.2,reuseaddr,fork,backlog=1024 UNIX-CONNECT:"+dir+"/mariadb/mysqld.sock >>"+dir+"/socat-server.log",
		"app: start socat-client: setsid -f socat UNIX-LISTEN:"+dir+"/remote-socket/server.sock,",
		"app: socat -u /dev/null TCP:198.18.21.2:3307,connect-timeout=2",
		"db: stream: "+dir+"/wirelab agent sample --every 1s --for 6h --comm sysbench",
		"app: stream: "+dir+"/wirelab agent sample --every 1s --for 6h --up-class eth1:1:1 --down-class wlifb-eth1:1:1 --comm sysbench",
		"__delayer --detach --queue 100,101 --delay '100µs'", // the wire, as a client without netem gets it
	)
	for _, w := range []string{"stop socat-client", "stop socat-server", "stop mariadb-agent", "app: tc qdisc del dev eth1 root"} {
		if !strings.Contains(text, w) {
			t.Errorf("teardown lacks %q", w)
		}
	}
	if i, j := strings.Index(text, "stop socat-server"), strings.Index(text, "stop mariadb-agent"); i > j {
		t.Errorf("the hops must stop before the server:\n%s", text)
	}
	if i, j := strings.Index(text, "command -v socat"), strings.Index(text, "copy "); i < 0 || j < 0 || i > j {
		t.Errorf("socat must be checked before anything is copied:\n%s", text)
	}
}

// Without local-tcp and remote-socket: no loopback listener, no socat anywhere.
func TestDryRunTransportWithoutLocalPathsNeedsNoSocat(t *testing.T) {
	var out bytes.Buffer
	if err := DryRun(context.Background(), dryOptions(t, &out), transport("socket", "remote-tcp")); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	if strings.Contains(text, "socat") || strings.Contains(text, "127.0.0.1") {
		t.Errorf("a plan without remote-socket and local-tcp mentions socat or 127.0.0.1:\n%s", text)
	}
}

// A study whose setup measures (bandwidth's --calibrate) is planned up to that
// measurement, which the plan names, and then point by point with the rates given.
func TestDryRunOfACalibratingStudy(t *testing.T) {
	var out bytes.Buffer
	st := study.NewBandwidth(study.BandwidthOptions{
		Bench: study.Bench{Threads: []int{1}, Duration: time.Second, Tables: 1, TableSize: 10, Repeat: 1,
			Workload: "oltp_read_only", RandType: "pareto", Engine: engine.MariaDB},
		Slow: link.Condition{RateBps: 20_000_000}, Experiments: []string{"n1"}, CalibrateThreads: 64})
	if err := DryRun(context.Background(), dryOptions(t, &out), st); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	assertPrints(t, text, "--threads=64 --time=1", "# bandwidth's setup measures", "--threads=1 --time=1",
		"rate 20000000bit", "app: tc qdisc del dev eth1 root")
}
