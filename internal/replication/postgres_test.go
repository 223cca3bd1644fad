package replication

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/postgres"
	"github.com/wirelab/wirelab/internal/result"
)

func TestPostgresChecksumQuery(t *testing.T) {
	want := `SELECT count(*), COALESCE(md5(string_agg(md5(t::text), '' ORDER BY t."id")), '-') FROM "sbtest1" t`
	if got := postgresChecksumQuery(SysbenchTables(1)[0]); got != want {
		t.Errorf("query:\n got %s\nwant %s", got, want)
	}
	if got := postgresChecksumQuery(Table{Name: `odd"name`, Key: "id"}); !strings.Contains(got, `FROM "odd""name" t`) {
		t.Errorf("identifier not quoted: %s", got)
	}
	// pgbench_history has no key: its rows' md5s are sorted bytewise.
	want = `SELECT count(*), COALESCE(md5(string_agg(h, '' ORDER BY h COLLATE "C")), '-') FROM (SELECT md5(t::text) AS h FROM "pgbench_history" t) r`
	if got := postgresChecksumQuery(PgbenchTables()[3]); got != want {
		t.Errorf("keyless query:\n got %s\nwant %s", got, want)
	}
}

func TestPostgresDSN(t *testing.T) {
	s := &postgres.Server{SocketDir: "/run/wl/postgres-server/run", Port: 5432, User: "sbtest", Password: `p'w\`, DB: "sbtest"}
	want := `host='/run/wl/postgres-server/run' port='5432' user='sbtest' password='p\'w\\' dbname='sbtest' ` +
		`sslmode='disable' connect_timeout='5' application_name='wirelab-replication'`
	if got := postgresDSN(s); got != want {
		t.Errorf("dsn:\n got %s\nwant %s", got, want)
	}
}

func TestDialects(t *testing.T) {
	// Each driver's placeholders: go-sql-driver/mysql takes ?, lib/pq takes $1.
	for name, d := range map[string]struct {
		d                  Dialect
		placeholder, other string
		upsert             string
	}{"mysql": {MySQLDialect, "?", "$1", "REPLACE INTO"}, "postgres": {PostgresDialect, "$1", "?", "ON CONFLICT (id) DO UPDATE"}} {
		for _, q := range []string{d.d.Seed, d.d.Write} {
			if !strings.Contains(q, d.placeholder) || strings.Contains(q, d.other) {
				t.Errorf("%s: %q does not use %s alone", name, q, d.placeholder)
			}
		}
		if !strings.Contains(d.d.Seed, d.upsert) {
			t.Errorf("%s seed %q is not an upsert (%s)", name, d.d.Seed, d.upsert)
		}
		for _, q := range []string{d.d.Table, d.d.Seed, d.d.Write, d.d.Read} {
			if !strings.Contains(q, HeartbeatTable) {
				t.Errorf("%s: %q is not about %s", name, q, HeartbeatTable)
			}
		}
	}
	if strings.Contains(PostgresDialect.Table, "ENGINE=") || strings.Contains(PostgresDialect.Table, "UNSIGNED") {
		t.Errorf("MySQL words in PostgreSQL's table: %s", PostgresDialect.Table)
	}
}

func TestChannelsForEngine(t *testing.T) {
	if got := ChannelsFor(engine.Postgres); !slices.Equal(got, []Channel{Native, Tunnel}) {
		t.Errorf("postgres channels %v", got)
	}
	if got := ChannelsFor(engine.MariaDB); !slices.Equal(got, Channels) {
		t.Errorf("mariadb channels %v", got)
	}
	err := CheckChannels(engine.Postgres, []Channel{Native, NativeCompressed})
	if err == nil || !strings.Contains(err.Error(), "--channels") || !strings.Contains(err.Error(), "no compression") {
		t.Errorf("postgres native-compressed: %v; want a refusal naming --channels and why", err)
	}
	if err := CheckChannels(engine.MariaDB, Channels); err != nil {
		t.Errorf("mariadb refused its channels: %v", err)
	}
}

func TestStreamingFrom(t *testing.T) {
	tunnel := postgres.Receiver{Status: "streaming", Host: "127.0.0.1", Port: 3307}
	tests := []struct {
		r    postgres.Receiver
		ok   bool
		want bool
	}{
		{tunnel, true, true},
		{tunnel, false, false},
		{postgres.Receiver{Status: "streaming", Host: "198.18.0.2", Port: 5432}, true, false}, // still the old channel
		{postgres.Receiver{Status: "waiting", Host: "127.0.0.1", Port: 3307}, true, false},
	}
	for _, tc := range tests {
		if got := streamingFrom(tc.r, tc.ok, "127.0.0.1", 3307); got != tc.want {
			t.Errorf("streamingFrom(%+v, %v) = %v", tc.r, tc.ok, got)
		}
	}
}

// The notes speak the engine's language: no GTID or CHECKSUM TABLE on PostgreSQL, and it
// says why there is no native-compressed channel.
func TestNotesPerEngine(t *testing.T) {
	o := Options{Rule: DefaultRule, AbortLag: 30 * time.Second, CatchUpTimeout: time.Minute, SearchFactor: 1.2, Precision: 0.05, Threads: 4}
	maria := strings.Join(o.notes(), "\n")
	o.Engine = engine.Postgres
	pg := strings.Join(o.notes(), "\n")
	for _, w := range []string{"CHECKSUM TABLE", "MASTER_USE_GTID", "binlog Mbit/s"} {
		if !strings.Contains(maria, w) {
			t.Errorf("mariadb notes lack %q", w)
		}
		if strings.Contains(pg, w) {
			t.Errorf("postgres notes say %q", w)
		}
	}
	for _, w := range []string{"streaming replication", "primary_conninfo", "LSN", "md5", "WAL Mbit/s",
		"native-compressed is not available on PostgreSQL", "tunnel is the compressed channel"} {
		if !strings.Contains(pg, w) {
			t.Errorf("postgres notes lack %q", w)
		}
	}
	if o.spec().Extra["engine"] != "postgres" {
		t.Errorf("spec extra %v: want the engine", o.spec().Extra)
	}
	if !strings.Contains(o.copyNote(time.Second), "pg_basebackup") {
		t.Errorf("postgres copy note: %s", o.copyNote(time.Second))
	}
}

func TestFactsNote(t *testing.T) {
	f := engine.Facts{Engine: string(engine.Postgres), Version: "PostgreSQL 15.8", Settings: []result.Setting{{Name: "wal_compression", Value: "off"},
		{Name: "synchronous_commit", Value: "off"}}}
	if got, want := factsNote("source", f), "source: PostgreSQL 15.8; wal_compression=off, synchronous_commit=off"; got != want {
		t.Errorf("factsNote = %q, want %q", got, want)
	}
}
