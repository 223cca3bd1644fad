package remote

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/syncrep"
)

// syncStudy is study sync with MariaDB's async and semi-sync modes at two RTTs, one
// thread, a small data set.
func syncStudy(t *testing.T) *syncrep.Study {
	t.Helper()
	modes, err := syncrep.ParseModes("async,semisync-after-sync,semisync-after-commit", engine.MariaDB)
	if err != nil {
		t.Fatal(err)
	}
	o := syncrep.Options{Engine: engine.MariaDB, Modes: modes, Workload: "oltp_write_only", RTTs: []time.Duration{0, 20 * time.Millisecond},
		Threads: []int{1}, Duration: 3 * time.Second, SemiSyncTimeout: time.Second, Tables: 1, TableSize: 100,
		BufferPool: "128M", CatchUpTimeout: time.Minute}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := syncrep.CheckHosts(o, true); err != nil {
		t.Fatal(err)
	}
	return syncrep.New(o)
}

// The dry run of study sync on real hosts is the replication study's pair (the same
// source and replica agents, CHANGE MASTER run on the replica's host, the replica's NIC
// shaped toward the source) with each mode's statements on both servers' own hosts, the
// load beside the source, and the sample agents counting sysbench with the source and
// the replica's server as the far side; the teardown removes everything, and the client
// is never contacted.
func TestDryRunSync(t *testing.T) {
	var out bytes.Buffer
	if err := DryRun(context.Background(), replicaOptions(t, &out), syncStudy(t)); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	text := out.String()
	assertPrints(t, text,
		"rep: ip link show dev eth2", "rep: sh -c 'command -v mariadbd",
		"rep: tc filter add dev eth2 parent 1: protocol ip prio 5 u32 match ip dst 198.18.21.2/32 flowid 1:1",
		"db: start mariadb-agent: setsid -f /tmp/wirelab-XXXXXX/wirelab agent mariadb --dir /tmp/wirelab-XXXXXX/mariadb --bind 198.18.21.2 --port 3306 --for 4h0m0s --buffer-pool 128M --server-id 1 --log-bin",
		"rep: start mariadb-agent: setsid -f /tmp/wirelab-XXXXXX/wirelab agent mariadb --dir /tmp/wirelab-XXXXXX/mariadb --bind 198.18.20.3 --port 3306 --for 4h0m0s --buffer-pool 128M --server-id 2 --log-bin --set slave_net_timeout=10",
		`CHANGE MASTER TO MASTER_HOST='\''198.18.21.2'\'', MASTER_PORT=3306`,
		`db: mariadb --no-defaults --protocol=socket --socket=/tmp/wirelab-XXXXXX/mariadb/mysqld.sock --user=root --batch --raw --connect-timeout=5 --skip-ssl --skip-column-names '--execute=SET GLOBAL rpl_semi_sync_master_timeout = 1000; SET GLOBAL rpl_semi_sync_master_wait_point = '\''AFTER_SYNC'\''; SET GLOBAL rpl_semi_sync_master_enabled = ON'`,
		`rep: mariadb --no-defaults --protocol=socket --socket=/tmp/wirelab-XXXXXX/mariadb/mysqld.sock --user=root --batch --raw --connect-timeout=5 --skip-ssl --skip-column-names '--execute=SET GLOBAL rpl_semi_sync_slave_enabled = ON; STOP SLAVE IO_THREAD; START SLAVE IO_THREAD'`,
		"AFTER_COMMIT", "SET GLOBAL rpl_semi_sync_master_enabled = OFF",
		"rep: stream: /tmp/wirelab-XXXXXX/wirelab agent sample --every 1s --for 6h --up-class eth2:1:1 --down-class wlifb-eth2:1:1 --comm mariadbd",
		"db: stream: /tmp/wirelab-XXXXXX/wirelab agent sample --every 1s --for 6h --comm mariadbd --comm sysbench",
		"db: stream: sysbench oltp_write_only --db-driver=mysql --mysql-socket=/tmp/wirelab-XXXXXX/mariadb/mysqld.sock",
		"rep: tc qdisc del dev eth2 root", "rep: rm -rf -- /tmp/wirelab-XXXXXX", "db: rm -rf -- /tmp/wirelab-XXXXXX")
	if strings.Contains(text, "app:") {
		t.Errorf("the client was contacted by a sync study:\n%s", text)
	}
	if n := strings.Count(text, "stream: sysbench oltp_write_only --db-driver=mysql") - 2; n != 6 {
		t.Errorf("%d sysbench runs, want one per mode and RTT (6)", n)
	}
	if strings.Contains(text, "galera") || strings.Contains(text, "wsrep") {
		t.Errorf("a Galera step in the plan:\n%s", text)
	}
}
