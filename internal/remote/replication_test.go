package remote

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/inventory"
	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/replication"
	"github.com/wirelab/wirelab/internal/study"
)

// replicaInventory is study replication's: a source and a replica whose NIC is shaped;
// the client is there and ignored.
const replicaInventory = testInventory + `  - name: rep
    role: replica
    address: 198.18.20.3
    nic: eth2
    server:
      start: mariadb
`

func replicaOptions(t *testing.T, out *bytes.Buffer) Options {
	t.Helper()
	o := dryOptions(t, out)
	inv, err := inventory.Parse([]byte(replicaInventory), "/root")
	if err != nil {
		t.Fatal(err)
	}
	inv.Path = "hosts.yaml"
	o.Inventory = inv
	return o
}

func replicationStudy(t *testing.T) *replication.Study {
	t.Helper()
	o := replication.Options{Channels: replication.Channels, Scenarios: []int{3, 4}, LagQPS: 300, Fault: replication.Fault{At: time.Second, For: time.Second}, Link: link.Condition{RateBps: 2_000_000, Delay: 10 * time.Millisecond},
		Loads: []int{300}, Duration: 3 * time.Second, CatchUpTimeout: time.Minute, Tables: 1, TableSize: 100, Threads: 2,
		RandType: "uniform", BufferPool: "128M", Tunnel: lab.TunnelOptions{}}
	return replication.New(o)
}

// The dry run of study replication prints the whole life of the pair on real hosts and
// contacts nobody: both hosts' checks and staging, the replica's NIC shaped toward the
// source's data address, a source and a replica through their agents with their
// replication settings, CHANGE MASTER to the source's data address run on the replica's
// own host, every channel's point (the tunnel's ends on both hosts, the sample agents,
// sysbench on the source's host), iptables checked for scenario 4's drop, and the
// teardown; the client is never contacted.
func TestDryRunReplication(t *testing.T) {
	var out bytes.Buffer
	if err := DryRun(context.Background(), replicaOptions(t, &out), replicationStudy(t)); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	text := out.String()
	assertPrints(t, text,
		"rep: ip link show dev eth2", "rep: sh -c 'command -v mariadbd", "rep: sh -c 'command -v ss ", "db: sh -c 'command -v ss ", "rep: sh -c 'command -v iptables ",
		"rep: tc filter add dev eth2 parent 1: protocol ip prio 5 u32 match ip dst 198.18.21.2/32 flowid 1:1",
		"db: start mariadb-agent: setsid -f /tmp/wirelab-XXXXXX/wirelab agent mariadb --dir /tmp/wirelab-XXXXXX/mariadb --bind 198.18.21.2 --port 3306 --for 4h0m0s --buffer-pool 128M --server-id 1 --log-bin",
		"rep: start mariadb-agent: setsid -f /tmp/wirelab-XXXXXX/wirelab agent mariadb --dir /tmp/wirelab-XXXXXX/mariadb --bind 198.18.20.3 --port 3306 --for 4h0m0s --buffer-pool 128M --server-id 2 --log-bin --set slave_net_timeout=10",
		"db: # connect to unix /tmp/wirelab-XXXXXX/mariadb/mysqld.sock through SSH",
		"rep: mariadb --no-defaults --protocol=socket",
		`CHANGE MASTER TO MASTER_HOST='\''198.18.21.2'\'', MASTER_PORT=3306`,
		"SET GLOBAL slave_compressed_protocol=ON",
		"db: start tunnel-exit: setsid -f /tmp/wirelab-XXXXXX/wirelab tunnel exit --listen 198.18.21.2:4406 --to 198.18.21.2:3306",
		"rep: copy 0 bytes to /tmp/wirelab-XXXXXX/tunnel-certs/entry-key.pem (mode 600)",
		"rep: start tunnel-entry: setsid -f /tmp/wirelab-XXXXXX/wirelab tunnel entry --listen 127.0.0.1:3307 --to 198.18.21.2:4406",
		`CHANGE MASTER TO MASTER_HOST='\''127.0.0.1'\'', MASTER_PORT=3307`,
		"rep: stream: /tmp/wirelab-XXXXXX/wirelab agent sample --every 1s --for 6h --up-class eth2:1:1 --down-class wlifb-eth2:1:1 --comm mariadbd",
		"db: stream: sysbench oltp_write_only --db-driver=mysql --mysql-socket=/tmp/wirelab-XXXXXX/mariadb/mysqld.sock",
		"rep: stop tunnel-entry:", "db: stop tunnel-exit:", "rep: tc qdisc del dev eth2 root", "rep: rm -rf -- /tmp/wirelab-XXXXXX",
		"db: rm -rf -- /tmp/wirelab-XXXXXX")
	if strings.Contains(text, "app:") {
		t.Errorf("the client was contacted by a replication study:\n%s", text)
	}
	if n := strings.Count(text, "stream: sysbench oltp_write_only") - 2; n != 6 {
		t.Errorf("%d sysbench runs, want one per channel and scenario (6)", n)
	}
	// The tunnel's ends stop before the servers, the servers before the shaping goes.
	if i, j, k := strings.Index(text, "stop tunnel-entry"), strings.Index(text, "stop mariadb-agent"), strings.LastIndex(text, "tc qdisc del dev eth2 root"); !(i < j && j < k) {
		t.Errorf("teardown order: tunnel %d, servers %d, shaping %d", i, j, k)
	}
}

// A replication study refuses PostgreSQL on real hosts by name before anything is
// contacted.
func TestReplicationRefusesPostgres(t *testing.T) {
	var out bytes.Buffer
	needs := study.Needs{Hosts: []string{lab.Replica, lab.Server}, Servers: []study.Server{{Host: lab.Server, DB: lab.DBOptions{Engine: "postgres"}}}}
	if _, err := Open(context.Background(), replicaOptions(t, &out), needs); err == nil || !strings.Contains(err.Error(), "--engine postgres runs in the namespace lab only") {
		t.Errorf("postgres replication on hosts: %v", err)
	}
	if out.Len() != 0 {
		t.Errorf("a refused study printed commands:\n%s", out.String())
	}
}
