package galera

import (
	"os"
	"strings"
	"testing"
	"time"
)

// statusFixture is `SHOW GLOBAL STATUS LIKE 'wsrep\_%'` of a real primary (MariaDB 10.11,
// galera 4.23) after a short sysbench load; the root test rewrites it with -update.
const statusFixture = "testdata/wsrep-status-primary.txt"

func TestParseStatusRealOutput(t *testing.T) {
	b, err := os.ReadFile(statusFixture)
	if err != nil {
		t.Fatal(err)
	}
	s, err := parseStatus(string(b))
	if err != nil {
		t.Fatal(err)
	}
	if !s.synced(2) {
		t.Errorf("the captured primary was a synced member of two: %+v", s)
	}
	if s.LastCommitted <= 0 || s.Replicated <= 0 || s.ReplicatedBytes <= s.Replicated || s.Received <= 0 {
		t.Errorf("counters not read: %+v", s)
	}
	// The captured values themselves, read from the file, so the parser is checked
	// field by field against what the server printed.
	want := map[string]int64{}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, "\t"); ok {
			var n int64
			for _, c := range v {
				if c < '0' || c > '9' {
					n = -1
					break
				}
				n = n*10 + int64(c-'0')
			}
			want[k] = n
		}
	}
	for k, got := range map[string]int64{"wsrep_last_committed": s.LastCommitted, "wsrep_replicated": s.Replicated,
		"wsrep_replicated_bytes": s.ReplicatedBytes, "wsrep_flow_control_sent": s.FlowControlSent,
		"wsrep_flow_control_recv": s.FlowControlRecv, "wsrep_flow_control_paused_ns": s.FlowControlPausedNs,
		"wsrep_local_cert_failures": s.CertFailures, "wsrep_cluster_size": int64(s.ClusterSize)} {
		if w, ok := want[k]; !ok || w != got {
			t.Errorf("%s = %d, the server printed %d (present %v)", k, got, w, ok)
		}
	}
}

func TestParseStatusRefusesGarbage(t *testing.T) {
	_, err := parseStatus("wsrep_cluster_size\t2\nwsrep_flow_control_sent\tlots\n")
	if err == nil || !strings.Contains(err.Error(), "wsrep_flow_control_sent=lots") {
		t.Errorf("err = %v", err)
	}
}

func TestSince(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a := Stats{At: t0, Primary: NodeStats{FlowControlPausedNs: 1e9, FlowControlRecv: 3, Replicated: 100, CertFailures: 1},
		Replica: NodeStats{FlowControlSent: 3, Received: 100}}
	b := Stats{At: t0.Add(4 * time.Second), Primary: NodeStats{FlowControlPausedNs: 2e9, FlowControlRecv: 5, Replicated: 300,
		CertFailures: 1, SendQueueAvg: 0.25}, Replica: NodeStats{FlowControlSent: 5, Received: 300}}
	w := b.Since(a)
	if w.Seconds != 4 || w.Primary.FlowControlPausedNs != 1e9 || w.Primary.FlowControlPaused != 0.25 {
		t.Errorf("paused: %+v", w)
	}
	if w.Primary.Replicated != 200 || w.Replica.Received != 200 || w.Replica.FlowControlSent != 2 ||
		w.Primary.FlowControlRecv != 2 || w.Primary.CertFailures != 0 || w.Primary.SendQueueAvg != 0.25 {
		t.Errorf("deltas: %+v", w)
	}
	// A counter that went down (a FLUSH STATUS between the readings) counts from zero.
	b.Primary.FlowControlRecv = 1
	if w := b.Since(a); w.Primary.FlowControlRecv != 1 {
		t.Errorf("reset counter: %d", w.Primary.FlowControlRecv)
	}
}
