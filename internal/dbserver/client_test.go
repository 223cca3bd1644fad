package dbserver

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/wirelab/wirelab/internal/execx"
)

func TestRunClientAndRows(t *testing.T) {
	f := &execx.Fake{Responses: map[string]string{"mariadb --execute=SELECT": "id\tv\n1\ta\n"},
		Errors: map[string]error{"mariadb --execute=DROP": errors.New("exit status 1")}}
	rows, err := Rows(RunClient(context.Background(), f, "mariadb exec", "SELECT id, v FROM t", "mariadb", "--execute=SELECT id, v FROM t"))
	if err != nil || len(rows) != 1 || rows[0]["v"] != "a" {
		t.Errorf("rows = %v, %v", rows, err)
	}
	_, err = Rows(RunClient(context.Background(), f, "mariadb exec", "DROP\n  TABLE t", "mariadb", "--execute=DROP TABLE t"))
	if err == nil || err.Error() != `mariadb exec "DROP TABLE t": exit status 1` {
		t.Errorf("err = %v, want the client and its SQL named", err)
	}
}

func TestVersionRowWarnsOnFewerConnections(t *testing.T) {
	var log strings.Builder
	l := slog.New(slog.NewTextHandler(&log, nil))
	if v := VersionRow("10.11.6-MariaDB\t4200\n", 4200, l, "lowered"); v != "10.11.6-MariaDB" || log.Len() != 0 {
		t.Errorf("version %q, log %q", v, log.String())
	}
	if v := VersionRow("15.18\t1000\n", 2100, l, "lowered"); v != "15.18" || !strings.Contains(log.String(), "msg=lowered want=2100 got=1000") {
		t.Errorf("version %q, log %q", v, log.String())
	}
	if v := VersionRow("15.18\n", 2100, nil, "lowered"); v != "15.18" {
		t.Errorf("version alone: %q", v)
	}
}

func TestConfigCheck(t *testing.T) {
	good := Config{Engine: "postgres", Dir: "/x", Bind: "127.0.0.1", Port: 5432, Socket: "/x/run/.s.PGSQL.5432",
		Extra: map[string]string{"wal_compression": "lz4"}, BadKeyChars: " ='"}
	if err := good.Check(); err != nil {
		t.Fatalf("good config refused: %v", err)
	}
	for want, c := range map[string]func(*Config){
		"Dir must be an absolute path": func(c *Config) { c.Dir = "rel" },
		"BindAddress is required":      func(c *Config) { c.Bind = " , " },
		"port 70000 out of range":      func(c *Config) { c.Port = 70000 },
		"longer than 107 bytes":        func(c *Config) { c.Socket = "/" + strings.Repeat("d", 107) },
		`bad extra setting "a"="1\n["`: func(c *Config) { c.Extra = map[string]string{"a": "1\n["} },
		`bad extra setting "a b"="1"`:  func(c *Config) { c.Extra = map[string]string{"a b": "1"} },
		`bad extra setting " "=""`:     func(c *Config) { c.Extra = map[string]string{" ": ""} },
	} {
		bad := good
		c(&bad)
		if err := bad.Check(); err == nil || !strings.HasPrefix(err.Error(), "postgres config: ") || !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v, want %q", err, want)
		}
	}
}

func TestDirsIn(t *testing.T) {
	if d := DirsIn("/lab/srv"); d != (Dirs{Dir: "/lab/srv", DataDir: "/lab/srv/data", CertDir: "/lab/srv/certs"}) {
		t.Errorf("DirsIn = %+v", d)
	}
}
