package mariadb

import (
	"strings"
	"testing"
)

func TestMyCnf(t *testing.T) {
	l := newLayout("/lab/srv")
	tests := []struct {
		name       string
		cfg        Config
		want, nope []string
	}{
		{"defaults, no binlog", Config{Dir: "/lab/srv", BindAddress: "198.18.0.2"},
			[]string{
				"[mysqld]\n", "user = mysql\n", "datadir = /lab/srv/data\n", "tmpdir = /lab/srv/tmp\n",
				"socket = /lab/srv/mysqld.sock\n", "port = 3306\n", "bind-address = 198.18.0.2\n",
				"pid-file = /lab/srv/mysqld.pid\n", "log-error = /lab/srv/error.log\n",
				"\nskip-name-resolve\n", "performance_schema = OFF\n",
				"innodb_buffer_pool_size = 1G\n", "innodb_flush_log_at_trx_commit = 2\n",
				"max_connections = 4200\n", "back_log = 4200\n", "thread_cache_size = 4200\n",
				"max_prepared_stmt_count = 1048576\n",
				"ssl-ca = /lab/srv/certs/ca.pem\n", "ssl-cert = /lab/srv/certs/server-cert.pem\n",
				"ssl-key = /lab/srv/certs/server-key.pem\n", "\nskip-log-bin\n",
			},
			[]string{"log_bin =", "server_id", "gtid_strict_mode"}},
		{"replication primary with extras", Config{Dir: "/lab/srv", BindAddress: "127.0.0.1", Port: 3307,
			ServerID: 7, LogBin: true, GTID: true, BufferPool: "256M", MaxConnections: 100,
			Extra: map[string]string{"innodb_log_file_size": "512M", "skip-ssl": "", "b_opt": "1"}},
			[]string{
				"port = 3307\n", "server_id = 7\n", "log_bin = /lab/srv/data/mysql-bin\n",
				"binlog_format = ROW\n", "log_slave_updates = ON\n", "gtid_strict_mode = ON\n",
				"innodb_buffer_pool_size = 256M\n", "max_connections = 100\n", "back_log = 100\n",
				// extras come last, sorted, so they override our defaults
				"b_opt = 1\ninnodb_log_file_size = 512M\nskip-ssl\n",
			},
			[]string{"skip-log-bin"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := myCnf(tt.cfg.withDefaults(), l)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("my.cnf lacks %q:\n%s", w, got)
				}
			}
			for _, n := range tt.nope {
				if strings.Contains(got, n) {
					t.Errorf("my.cnf has %q:\n%s", n, got)
				}
			}
			if !strings.HasSuffix(got, "\n") || strings.Count(got, "[mysqld]") != 1 {
				t.Errorf("malformed my.cnf:\n%s", got)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	long := "/" + strings.Repeat("d", 100)
	bad := []Config{
		{BindAddress: "127.0.0.1"},
		{Dir: "relative", BindAddress: "127.0.0.1"},
		{Dir: "/x"},
		{Dir: "/x", BindAddress: "127.0.0.1", Port: 70000},
		{Dir: long, BindAddress: "127.0.0.1"}, // socket path over 107 bytes
		{Dir: "/x", BindAddress: "127.0.0.1", Extra: map[string]string{"a": "1\n[client]"}},
	}
	for _, c := range bad {
		if err := c.withDefaults().validate(); err == nil {
			t.Errorf("validate(%+v) accepted a bad config", c)
		}
	}
	if err := (Config{Dir: "/x", BindAddress: "127.0.0.1"}).withDefaults().validate(); err != nil {
		t.Errorf("good config rejected: %v", err)
	}
}
