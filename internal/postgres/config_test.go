package postgres

import (
	"strings"
	"testing"
)

func TestPostgresqlConf(t *testing.T) {
	l := newLayout("/lab/srv")
	tests := []struct {
		name       string
		cfg        Config
		want, nope []string
	}{
		{"defaults", Config{Dir: "/lab/srv", BindAddress: "198.18.0.2, 127.0.0.1"},
			[]string{
				"data_directory = '/lab/srv/data'\n", "hba_file = '/lab/srv/pg_hba.conf'\n",
				"ident_file = '/lab/srv/pg_ident.conf'\n",
				"listen_addresses = '198.18.0.2,127.0.0.1'\n", "port = 5432\n",
				"unix_socket_directories = '/lab/srv/run'\n", "max_connections = 2100\n",
				"ssl = 'on'\n", "ssl_cert_file = '/lab/srv/certs/server-cert.pem'\n",
				"ssl_key_file = '/lab/srv/certs/server-key.pem'\n", "ssl_ca_file = '/lab/srv/certs/ca.pem'\n",
				"shared_buffers = '1GB'\n", "synchronous_commit = 'off'\n", "wal_level = 'replica'\n",
				"max_wal_senders = 10\n", "wal_compression = 'off'\n", "logging_collector = 'off'\n",
			},
			[]string{"include", "/etc/postgresql"}},
		{"sizes and extras, extras last and quoted", Config{Dir: "/lab/srv", BindAddress: "127.0.0.1", Port: 5433,
			SharedBuffers: "128MB", MaxConnections: 100,
			Extra: map[string]string{"wal_compression": "lz4", "application_name": "it's"}},
			[]string{"port = 5433\n", "shared_buffers = '128MB'\n", "max_connections = 100\n",
				"application_name = 'it''s'\nwal_compression = 'lz4'\n"},
			nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := postgresqlConf(tt.cfg.withDefaults(), l)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("postgresql.conf lacks %q:\n%s", w, got)
				}
			}
			for _, n := range tt.nope {
				if strings.Contains(got, n) {
					t.Errorf("postgresql.conf has %q:\n%s", n, got)
				}
			}
		})
	}
}

func TestPgHBA(t *testing.T) {
	hba := pgHBA()
	for _, w := range []string{
		"local   all          postgres              peer\n",
		"local   all          all                   scram-sha-256\n",
		"host    all          all       0.0.0.0/0   scram-sha-256\n",
		"host    replication  all       0.0.0.0/0   scram-sha-256\n",
	} {
		if !strings.Contains(hba, w) {
			t.Errorf("pg_hba.conf lacks %q", w)
		}
	}
	// The first matching line wins: the superuser line must come before "local all all",
	// and nothing may let anyone in without a password.
	if strings.Index(hba, "postgres              peer") > strings.Index(hba, "local   all          all") {
		t.Error("superuser peer line comes after the password line")
	}
	for _, bad := range []string{"trust", "password\n", "md5"} {
		if strings.Contains(hba, bad) {
			t.Errorf("pg_hba.conf has %q", bad)
		}
	}
}

func TestValidate(t *testing.T) {
	long := "/" + strings.Repeat("d", 90)
	bad := []Config{
		{BindAddress: "127.0.0.1"},
		{Dir: "relative", BindAddress: "127.0.0.1"},
		{Dir: "/x"},
		{Dir: "/x", BindAddress: " , "},
		{Dir: "/x", BindAddress: "127.0.0.1", Port: 70000},
		{Dir: long, BindAddress: "127.0.0.1"}, // socket path over 107 bytes
		{Dir: "/x", BindAddress: "127.0.0.1", Extra: map[string]string{"a": "1\nssl = off"}},
		{Dir: "/x", BindAddress: "127.0.0.1", Extra: map[string]string{"a = b": "1"}},
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
