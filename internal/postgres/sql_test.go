package postgres

import (
	"context"
	"strings"
	"testing"

	"github.com/wirelab/wirelab/internal/execx"
)

func TestPsqlArgs(t *testing.T) {
	got := strings.Join(psqlArgs("/lab/srv/run", 5432, "sbtest", false, "SELECT 1", "SELECT 2"), " ")
	want := "-X -q --no-password -v ON_ERROR_STOP=1 -A -F \t -P footer=off -P null=NULL " +
		"-h /lab/srv/run -p 5432 -U postgres -d sbtest -t -c SELECT 1 -c SELECT 2"
	if got != want {
		t.Errorf("psqlArgs:\n got %q\nwant %q", got, want)
	}
	if strings.Contains(strings.Join(psqlArgs("/s", 1, "d", true, "x"), " "), " -t ") {
		t.Error("header requested but -t (tuples only) given")
	}
}

func TestBootstrapStatements(t *testing.T) {
	f := &execx.Fake{Responses: map[string]string{
		"setpriv --reuid=postgres --regid=postgres --init-groups -- /pg/bin/psql": "0\n",
	}}
	s := &Server{SocketDir: "/lab/srv/run", Port: 5432, DB: BenchDB, binDir: "/pg/bin", osUser: "postgres", runner: f}
	if err := s.bootstrap(context.Background(), 100); err != nil {
		t.Fatal(err)
	}
	calls := strings.Join(f.Lines(), "\n")
	for _, w := range []string{
		`CREATE ROLE "sbtest"`, `ALTER ROLE "sbtest" LOGIN PASSWORD '` + s.Password + `'`,
		`CREATE DATABASE "sbtest" OWNER "sbtest"`, "-d postgres",
	} {
		if !strings.Contains(calls, w) {
			t.Errorf("bootstrap lacks %q:\n%s", w, calls)
		}
	}
	if len(s.Password) != 32 || s.Version != "PostgreSQL 0" {
		t.Errorf("password %q, version %q", s.Password, s.Version)
	}
}

func TestQuoting(t *testing.T) {
	if got := quote("it's"); got != "'it''s'" {
		t.Errorf("quote = %s", got)
	}
	if got := ident(`a"b`); got != `"a""b"` {
		t.Errorf("ident = %s", got)
	}
}
