package engine

import (
	"slices"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for in, want := range map[string]Kind{"": MariaDB, "mariadb": MariaDB, "Postgres": Postgres} {
		got, err := Parse(in)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	_, err := Parse("mysql")
	if err == nil || !strings.Contains(err.Error(), "--engine") || !strings.Contains(err.Error(), "mariadb, postgres") {
		t.Errorf("Parse(mysql) error %v: want one naming the flag and the accepted values", err)
	}
}

func TestRefuseCompression(t *testing.T) {
	if err := MariaDB.RefuseCompression("--compression"); err != nil {
		t.Errorf("mariadb refused compression: %v", err)
	}
	err := Postgres.RefuseCompression("--compression")
	if err == nil || !strings.Contains(err.Error(), "--channel tunnel") || !strings.Contains(err.Error(), "--compression") {
		t.Errorf("postgres compression error %v: want the flag and the tunnel as the way out", err)
	}
}

func TestConnEnv(t *testing.T) {
	c := Conn{Engine: Postgres, Host: "198.18.1.2", Port: 5432, User: "sbtest", Password: "pw", DB: "sbtest", CertDir: "/x/certs"}
	env := c.Env(true)
	for _, want := range []string{"WIRELAB_ENGINE=postgres", "PGHOST=198.18.1.2", "PGPORT=5432", "PGUSER=sbtest",
		"PGPASSWORD=pw", "PGDATABASE=sbtest", "PGSSLMODE=require", "PGSSLROOTCERT=/x/certs/ca.pem"} {
		if !slices.Contains(env, want) {
			t.Errorf("postgres env %v lacks %s", env, want)
		}
	}
	if !slices.Contains(c.Env(false), "PGSSLMODE=disable") {
		t.Errorf("postgres env without TLS must disable it explicitly: %v", c.Env(false))
	}
	m := Conn{Engine: MariaDB, Host: "198.18.1.2", Port: 3306}.Env(false)
	if !slices.Equal(m, []string{"WIRELAB_ENGINE=mariadb"}) {
		t.Errorf("mariadb env = %v", m)
	}
}

func TestSocketFile(t *testing.T) {
	cases := []struct {
		c    Conn
		want string
	}{
		{Conn{Engine: MariaDB, Socket: "/tmp/x/mysqld.sock", Port: 3306}, "/tmp/x/mysqld.sock"},
		{Conn{Engine: Postgres, Socket: "/tmp/x/sock", Port: 5432}, "/tmp/x/sock/.s.PGSQL.5432"},
		{Conn{Engine: Postgres, Port: 5432}, ""},
	}
	for _, c := range cases {
		if got := c.c.SocketFile(); got != c.want {
			t.Errorf("%+v.SocketFile() = %q, want %q", c.c, got, c.want)
		}
	}
}
