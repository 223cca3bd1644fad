package galera

import (
	"strings"
	"testing"
	"time"
)

func TestServerSettings(t *testing.T) {
	p := node{Name: "server", Addr: "198.18.0.2"}
	r := node{Name: "replica", Addr: "198.18.2.2", Join: "198.18.0.2"}
	ps := serverSettings(p, Default(20*time.Millisecond), "/usr/lib/galera/libgalera_smm.so", "wirelab-abc")
	rs := serverSettings(r, Tuned(2*time.Second), "/usr/lib/galera/libgalera_smm.so", "wirelab-abc")

	if ps["wsrep_cluster_address"] != "gcomm://" {
		t.Errorf("the first node must bootstrap: %q", ps["wsrep_cluster_address"])
	}
	if rs["wsrep_cluster_address"] != "gcomm://198.18.0.2:4567" {
		t.Errorf("the replica must join the primary across the wire: %q", rs["wsrep_cluster_address"])
	}
	for k, v := range map[string]string{"wsrep_on": "ON", "wsrep_cluster_name": "wirelab-abc",
		"wsrep_node_address": "198.18.2.2", "wsrep_sst_receive_address": "198.18.2.2:4444",
		"binlog_format": "ROW", "innodb_autoinc_lock_mode": "2", "loose-ssl-mode": "DISABLED"} {
		if rs[k] != v {
			t.Errorf("%s = %q, want %q", k, rs[k], v)
		}
	}
	if _, ok := ps["wsrep_slave_threads"]; ok {
		t.Error("the default preset must leave wsrep_slave_threads at MariaDB's default")
	}

	def := ps["wsrep_provider_options"]
	for _, w := range []string{`"gmcast.listen_addr=tcp://198.18.0.2:4567; ist.recv_addr=198.18.0.2:4568; `,
		"evs.suspect_timeout=PT5S", "evs.inactive_timeout=PT15S"} {
		if !strings.Contains(def, w) {
			t.Errorf("default provider options lack %q: %s", w, def)
		}
	}
	if strings.Contains(def, "send_window") || strings.Contains(def, "fc_limit") {
		t.Errorf("default preset must not set the windows: %s", def)
	}
	tuned := rs["wsrep_provider_options"]
	for _, w := range []string{"tcp://198.18.2.2:4567", "evs.send_window=512", "evs.user_send_window=512",
		"evs.suspect_timeout=PT20S", "evs.inactive_timeout=PT60S", "evs.install_timeout=PT30S", "gmcast.peer_timeout=PT20S"} {
		if !strings.Contains(tuned, w) {
			t.Errorf("tuned provider options at 2 s RTT lack %q: %s", w, tuned)
		}
	}
	if !strings.HasPrefix(tuned, `"`) || !strings.HasSuffix(tuned, `"`) || strings.Count(tuned, `"`) != 2 {
		t.Errorf("provider options must be one quoted my.cnf value: %s", tuned)
	}
}

func TestFindProvider(t *testing.T) {
	if _, err := findProvider("/nonexistent/libgalera_smm.so"); err == nil {
		t.Error("a missing explicit provider was accepted")
	}
}
