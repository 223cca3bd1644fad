package replay

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/dbserver"
	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/nstest"
	"github.com/wirelab/wirelab/internal/pki"
	"github.com/wirelab/wirelab/internal/postgres"
	"github.com/wirelab/wirelab/internal/querylog"
)

// startPostgres starts a PostgreSQL server on a free loopback port; cleanup stops it.
func startPostgres(t *testing.T) *postgres.Server {
	t.Helper()
	nstest.SkipUnlessRoot(t, "setpriv")
	if _, err := postgres.FindBinDir(); err != nil {
		nstest.Unavailable(t, "%v", err)
	}
	if _, _, err := dbserver.UserIDs(postgres.DefaultOSUser); err != nil {
		nstest.Unavailable(t, "%v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	dir := filepath.Join(nstest.SharedDir(t, "wlrp"), "srv")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	s, err := postgres.Start(ctx, postgres.Config{Dir: dir, BindAddress: "127.0.0.1", Port: port, SharedBuffers: "128MB",
		MaxConnections: 50, Logger: slog.New(slog.NewTextHandler(testLog{t}, nil))})
	if err != nil {
		t.Fatalf("start postgres: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Stop(context.Background()); err != nil {
			t.Errorf("stop postgres: %v", err)
		}
	})
	return s
}

// pgSessions are what testdata's pgmixed.sql sent (as the PostgreSQL log records it),
// with two statements sent through the extended protocol, a session whose login failed
// and one open before the log began.
func pgSessions() []querylog.Event {
	q := func(line int64, sql string) querylog.Event { return query(line, "a", 0, sql) }
	params := q(12, "select $1::int + $2::int")
	params.Params = []string{"1", "2"}
	null := q(13, "select coalesce($1::text, 'null')")
	null.Params, null.Null = []string{""}, []bool{true}
	return []querylog.Event{
		connect(1, "a", 0),
		q(2, "select 1;"),
		q(3, "select\n  aid, abalance\nfrom (values (1, 2), (3, 4)) as t(aid, abalance)\nwhere aid < 3;"),
		q(4, "select * from nosuchtable;"),
		q(5, "select 'it''s', E'a\\nb', $$dollar ; quoted$$, 1.5e3, -- comment\n  /* block */ NULL;"),
		q(6, "begin;"),
		q(7, "create temp table tt (id int primary key, v text);"),
		q(8, "insert into tt values (1, 'x'), (2, 'multi\nline');"),
		q(9, "prepare q(int) as select v from tt where id = $1;"),
		q(10, "execute q(2);"),
		q(11, "commit;"),
		params, null,
		{Line: 14, Session: "b", Kind: querylog.Connect, Err: `password authentication failed for user "sbtest"`},
		query(15, "c", 0, "select 2 as c"),
		quit(16, "a", 0),
	}
}

func TestPostgresReplay(t *testing.T) {
	s := startPostgres(t)
	o := Options{Log: "pg.log", Format: querylog.PGStderr, Speed: SpeedMax,
		Target: Target{Engine: engine.Postgres, Host: s.Host, Port: s.Port, User: s.User, Password: s.Password, DB: s.DB}}
	replay := func(o Options) *Summary {
		t.Helper()
		var out bytes.Buffer
		sum, err := Replay(context.Background(), o, &sliceReader{evs: pgSessions()}, &out)
		if err != nil {
			t.Fatal(err)
		}
		d := &decoder{}
		for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			d.line(l)
		}
		sum.Shapes = d.shapes
		return sum
	}
	plain := replay(o)
	if plain.Statements != 13 || plain.Errors != 1 || kindErrors(plain)[KindSelect] != 1 ||
		plain.Sessions.Replayed != 2 || plain.Sessions.NotConnected != 1 || !strings.HasPrefix(plain.ServerVersion, "PostgreSQL 1") {
		t.Errorf("plain: %d statements, %d errors %+v, sessions %+v, version %q", plain.Statements, plain.Errors,
			plain.ErrorsByKind, plain.Sessions, plain.ServerVersion)
	}
	if e := plain.ErrorsByKind; len(e) == 0 || e[0].Samples[0].Line != 4 || !strings.Contains(e[0].Samples[0].Message, "42P01") {
		t.Errorf("plain: errors %+v; want line 4's undefined table", e)
	}
	// A simple query and an extended-protocol statement are each one round trip.
	// Transactions: 4 single statements, begin..commit, the 2 with parameters, and c's.
	if plain.RoundTrips.PerStatement != 1 || plain.Transactions != 8 {
		t.Errorf("plain: round trips %+v, transactions %d; want 1 per statement, 8", plain.RoundTrips, plain.Transactions)
	}
	// "select 1;" as a Query message: its type, its length and the text with its NUL.
	if sel := shapeOf(plain, "select ?"); sel.Count != 1 || sel.BytesOut != 1+4+10 {
		t.Errorf("plain: select 1 is %+v; want 15 bytes out", sel)
	}
	for _, k := range plain.Kinds {
		if k.Kind == KindSelect && k.Rows < 6 {
			t.Errorf("plain: select rows %d", k.Rows)
		}
	}
	t.Logf("plain: connect %+v", plain.Connect)

	o.Target.TLS, o.Target.CA = true, filepath.Join(s.CertDir, pki.CAFile)
	tls := replay(o)
	if sel := shapeOf(tls, "select ?"); tls.Statements != 13 || tls.Errors != 1 || tls.RoundTrips.PerStatement != 1 ||
		sel.BytesOut <= 15+20 || tls.Connect.RoundTrips <= plain.Connect.RoundTrips {
		t.Errorf("tls: %d statements, %d errors, round trips %+v, select 1 %+v, connect %+v",
			tls.Statements, tls.Errors, tls.RoundTrips, sel, tls.Connect)
	}
	t.Logf("tls: connect %+v", tls.Connect)
}
