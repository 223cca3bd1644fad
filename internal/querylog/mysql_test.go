package querylog

import (
	"testing"
	"time"
)

// TestGeneralRestart: the server's header again mid-log (FLUSH LOGS or a restart)
// closes nothing; a thread id that connects while open (a restart reused it) closes the
// old session first; a line that reads as no entry continues the statement before it.
func TestGeneralRestart(t *testing.T) {
	got := readDump(t, MySQLGeneral, generalHead+
		"261208  0:11:56\t     5 Connect\ta@h on db1 using TCP/IP\n"+
		"\t\t     5 Query\tselect 1,\n"+
		"\t\t    5 Query is not how an entry looks\n"+
		generalHead+
		"261208  0:11:58\t     6 Query\tselect 2\n"+
		"\t\t     5 Connect\tb@h on db2 using Socket\n"+
		"\t\t     5 Close stmt\t\n"+
		"\t\t     5 Long Data\t\n"+
		"\t\t     5 Reset connection\t\n")
	checkDump(t, got, []string{
		`L4 5 connect at=0s t=2026-12-08T00:11:56Z user="a" db="db1"`,
		`L5 5 query at=0s sql="select 1,\n\t\t    5 Query is not how an entry looks"`,
		`L10 6 connect at=2s implied`,
		`L10 6 query at=2s t=2026-12-08T00:11:58Z sql="select 2"`,
		`L11 5 quit at=2s implied user="a" db="db1"`,
		`L11 5 connect at=2s user="b" db="db2"`,
		`L14 5 admin at=2s cmd="Reset connection"`,
		`L14 6 quit at=2s implied`,
		`L14 5 quit at=2s implied user="b" db="db2"`,
	})
}

// TestSlowSessions: MariaDB's slow log names the schema on every entry; a session whose
// schema changes gets the implied USE its client's Init DB was; header lines again
// mid-log are skipped; an administrator command is what it names.
func TestSlowSessions(t *testing.T) {
	entry := func(id, schema, sql string) string {
		return "# User@Host: app[app] @  [10.0.0.5]\n# Thread_id: " + id + "  Schema: " + schema + "  QC_hit: No\n" +
			"# Query_time: 0.000100  Lock_time: 0.000000  Rows_sent: 2  Rows_examined: 0\n" +
			"# Rows_affected: 3  Bytes_sent: 58\nSET timestamp=1796688716;\n" + sql + ";\n"
	}
	got := readDump(t, MySQLSlow, "# Time: 261208  0:11:56\n"+
		entry("7", "", "select 1")+
		generalHead+
		entry("7", "shop", "select 2")+
		entry("7", "shop", "# administrator command: Ping")+
		entry("7", "shop", "# administrator command: Close stmt")+
		entry("7", "shop", "# administrator command: Quit"))
	checkDump(t, got, []string{
		`L2 7 connect at=0s implied user="app"`,
		`L2 7 query at=0s t=2026-12-08T00:11:56Z dur=100µs rows=5 user="app" sql="select 1"`,
		`L11 7 query at=0s implied user="app" db="shop" cmd="Init DB" sql="USE ` + "`shop`" + `"`,
		`L11 7 query at=0s t=2026-12-08T00:11:56Z dur=100µs rows=5 user="app" db="shop" sql="select 2"`,
		`L17 7 admin at=0s t=2026-12-08T00:11:56Z dur=100µs rows=5 user="app" db="shop" cmd="Ping"`,
		`L29 7 quit at=0s t=2026-12-08T00:11:56Z dur=100µs rows=5 user="app" db="shop"`,
	})
}

func TestTimes(t *testing.T) {
	iso := func(s string) time.Time { v, _, _ := isoTime([]byte(s)); return v }
	pg := func(s string) time.Time { v, _, _ := pgTime([]byte(s)); return v }
	want := time.Date(2024, 1, 2, 3, 4, 5, 123456000, time.UTC)
	for _, got := range []time.Time{iso("2024-01-02T03:04:05.123456Z"), iso("2024-01-02T05:04:05.123456+02:00"),
		iso("2024-01-01T21:34:05.123456-05:30"), pg("2024-01-02 03:04:05.123456 UTC"), pg("2024-01-02 04:04:05.123456 +01")} {
		if !got.Equal(want) {
			t.Errorf("%s, want %s", got, want)
		}
	}
	if got := pg("2024-01-02 03:04:05.123456 CET"); !got.Equal(want) {
		t.Errorf("a zone name: %s, want the clock as printed", got)
	}
	for _, bad := range []string{"2024-13-02T03:04:05Z", "2024-01-02T03:04:05", "2024-01-02 03:04:05.1|", "24-01-02"} {
		if _, _, ok := isoTime([]byte(bad)); ok {
			t.Errorf("isoTime(%q) read", bad)
		}
		if _, _, ok := pgTime([]byte(bad)); ok {
			t.Errorf("pgTime(%q) read", bad)
		}
	}
	if m, ok := mariaTime([]byte("261208  0:11:56")); !ok || !m.Equal(time.Date(2026, 12, 8, 0, 11, 56, 0, time.UTC)) {
		t.Errorf("mariaTime: %s %v", m, ok)
	}
	if _, ok := mariaTime([]byte("261308  0:11:56")); ok {
		t.Error("month 13 read")
	}
}
