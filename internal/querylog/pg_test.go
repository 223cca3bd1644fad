package querylog

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// pgLog builds a stderr log in pgreplay's format from "session|LEVEL:  message" lines,
// one millisecond apart.
func pgLog(lines ...string) string {
	var b strings.Builder
	for i, l := range lines {
		sid, msg, _ := strings.Cut(l, "|")
		fmt.Fprintf(&b, "2026-12-08 00:12:15.%03d UTC|app|shop|%s|%s\n", i, sid, msg)
	}
	return b.String()
}

// TestPGFailures: a statement that failed keeps its error; one that failed before it was
// logged (a syntax error) comes from the STATEMENT line; a login that failed is a
// Connect with its error and nothing after it.
func TestPGFailures(t *testing.T) {
	got := readDump(t, PGStderr, pgLog(
		"a.1|LOG:  connection authorized: user=app database=shop",
		"a.1|LOG:  statement: select * from nosuch;",
		"a.1|ERROR:  relation \"nosuch\" does not exist at character 15",
		"a.1|ERROR:  syntax error at or near \"selec\" at character 1",
		"a.1|STATEMENT:  selec 1;",
		"b.2|LOG:  connection authorized: user=app database=shop",
		"b.2|FATAL:  database \"shop\" does not exist",
		"c.3|FATAL:  password authentication failed for user \"app\"",
		"c.3|DETAIL:  Connection matched pg_hba.conf line 6",
		"a.1|LOG:  disconnection: session time: 0:00:00.030",
	))
	checkDump(t, got, []string{
		`L1 a.1 connect at=0s t=2026-12-08T00:12:15Z user="app" db="shop"`,
		`L2 a.1 query at=1ms t=2026-12-08T00:12:15.001Z user="app" db="shop" err="relation \"nosuch\" does not exist at character 15" sql="select * from nosuch;"`,
		`L5 a.1 query at=4ms t=2026-12-08T00:12:15.004Z user="app" db="shop" err="syntax error at or near \"selec\" at character 1" sql="selec 1;"`,
		`L6 b.2 connect at=5ms t=2026-12-08T00:12:15.005Z user="app" db="shop" err="database \"shop\" does not exist"`,
		`L8 c.3 connect at=7ms t=2026-12-08T00:12:15.007Z user="app" db="shop" err="password authentication failed for user \"app\""`,
		`L10 a.1 quit at=9ms t=2026-12-08T00:12:15.009Z user="app" db="shop"`,
	})
}

// TestPGExtended: parameters, durations, and what log_min_duration_statement=0 writes
// for the extended protocol (parse, bind, execute), sessions interleaved.
func TestPGExtended(t *testing.T) {
	got := readDump(t, PGStderr, pgLog(
		"a.1|LOG:  execute S_1: select $1, $2, $3",
		"b.2|LOG:  statement: select 1",
		"a.1|DETAIL:  parameters: $1 = 'it''s', $2 = NULL, $3 = ''",
		"b.2|LOG:  duration: 0.250 ms",
		"a.1|LOG:  duration: 2.000 ms",
		"b.2|LOG:  duration: 0.120 ms  parse S_2: update t set v = $1",
		"b.2|LOG:  duration: 0.010 ms  parse <unnamed>: select 2",
		"b.2|LOG:  duration: 0.020 ms  bind S_2: update t set v = $1",
		"b.2|DETAIL:  parameters: $1 = '7'",
		"b.2|LOG:  duration: 1.500 ms  execute S_2: update t set v = $1",
		"b.2|DETAIL:  parameters: $1 = '7'",
		"b.2|LOG:  duration: 0.500 ms  statement: commit",
		"a.1|LOG:  fastpath function call: \"lo_open\" (OID 952)",
	))
	checkDump(t, got, []string{
		`L1 a.1 connect at=0s implied user="app" db="shop"`,
		`L1 a.1 query at=0s t=2026-12-08T00:12:15Z dur=2ms user="app" db="shop" cmd="Execute" stmt="S_1" sql="select $1, $2, $3" $1="it's" $2=NULL $3=""`,
		`L2 b.2 connect at=1ms implied user="app" db="shop"`,
		`L2 b.2 query at=1ms t=2026-12-08T00:12:15.001Z dur=250µs user="app" db="shop" sql="select 1"`,
		`L6 b.2 prepare at=4.88ms t=2026-12-08T00:12:15.00488Z dur=120µs user="app" db="shop" stmt="S_2" sql="update t set v = $1"`,
		`L10 b.2 query at=7.5ms t=2026-12-08T00:12:15.0075Z dur=1.5ms user="app" db="shop" cmd="Execute" stmt="S_2" sql="update t set v = $1" $1="7"`,
		`L12 b.2 query at=10.5ms t=2026-12-08T00:12:15.0105Z dur=500µs user="app" db="shop" sql="commit"`,
		`L13 a.1 admin at=12ms t=2026-12-08T00:12:15.012Z user="app" db="shop" cmd="Function call" sql="\"lo_open\" (OID 952)"`,
		`L13 a.1 quit at=12ms implied user="app" db="shop"`,
		`L13 b.2 quit at=12ms implied user="app" db="shop"`,
	})
}

// TestPGReconnect: a session id that connects again while open was closed first; a
// server process's FATAL (no user in its prefix) is no failed login.
func TestPGReconnect(t *testing.T) {
	got := readDump(t, PGStderr, pgLog(
		"a.1|LOG:  connection authorized: user=app database=shop",
		"a.1|LOG:  connection authorized: user=app database=shop",
	)+"2026-12-08 00:12:15.002 UTC|||x.9|FATAL:  terminating autovacuum process due to administrator command\n")
	got[0], got[1] = got[0][:12], got[1][:12]
	checkDump(t, got, []string{"L1 a.1 conne", "L2 a.1 quit ",
		`L2 a.1 connect at=1ms t=2026-12-08T00:12:15.001Z user="app" db="shop"`,
		`L3 a.1 quit at=1ms implied user="app" db="shop"`})
}

// TestHoldLimit: a statement waiting for its session's next line does not hold back
// the log without bound: past holdLimit events it goes as it is, first, and the queue
// stays bounded.
func TestHoldLimit(t *testing.T) {
	lines := []string{"a.1|LOG:  statement: select pg_sleep(60)"}
	for i := 0; i < 2*holdLimit; i++ {
		lines = append(lines, fmt.Sprintf("b.2|LOG:  statement: select %d", i))
	}
	lines = append(lines, "a.1|ERROR:  canceling statement due to user request")
	var b strings.Builder
	for i, l := range lines {
		sid, msg, _ := strings.Cut(l, "|")
		fmt.Fprintf(&b, "2026-12-08 00:12:%02d.%03d UTC|app|shop|%s|%s\n", i/1000, i%1000, sid, msg)
	}
	l, err := Open(strings.NewReader(b.String()), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var evs []Event
	peak := 0
	for {
		ev, err := l.Next()
		if err != nil {
			break
		}
		peak = max(peak, len(l.q)-l.qHead)
		evs = append(evs, ev)
	}
	if len(evs) != 2*holdLimit+5 || evs[1].SQL != "select pg_sleep(60)" || evs[1].Err != "" {
		t.Fatalf("%d events; second %+v", len(evs), evs[1])
	}
	if peak > holdLimit+2 {
		t.Errorf("the queue grew to %d events", peak)
	}
	for i := 0; i < 2*holdLimit; i++ {
		if want := fmt.Sprintf("select %d", i); evs[i+3].SQL != want {
			t.Fatalf("event %d is %q, want %q: order lost", i+3, evs[i+3].SQL, want)
		}
	}
}

// TestPGCSVFailures: csvlog gives the failed statement in its query column.
func TestPGCSVFailures(t *testing.T) {
	rec := func(ms int, sev, msg, query string) string {
		return fmt.Sprintf("2026-12-08 00:12:24.%03d UTC,\"app\",\"shop\",6511,\"[local]\",6b17.196f,1,\"idle\",2026-12-08 00:12:24 UTC,3/7,0,%s,00000,\"%s\",,,,,,\"%s\",,,\"psql\",\"client backend\",,0\n",
			ms, sev, msg, query)
	}
	log := rec(1, "LOG", "connection authorized: user=app database=shop", "") +
		rec(2, "LOG", "statement: select * from nosuch;", "") +
		rec(3, "ERROR", `relation ""nosuch"" does not exist`, "select * from nosuch;") +
		rec(4, "ERROR", `syntax error at or near ""selec""`, "selec 1;")
	evs, _, err := readAll(t, strings.NewReader(log), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 4 || evs[1].Err != `relation "nosuch" does not exist` || evs[2].SQL != "selec 1;" ||
		evs[2].Err != `syntax error at or near "selec"` || evs[2].At != 3*time.Millisecond {
		for _, ev := range evs {
			t.Log(dump(ev))
		}
		t.Fatal("csvlog failures read wrong")
	}
}

// TestPGOtherLogLines: a LOG line that is nothing the session sent (a lock wait) leaves
// its statement open for the ERROR that ends it.
func TestPGOtherLogLines(t *testing.T) {
	got := readDump(t, PGStderr, pgLog(
		"a.1|LOG:  statement: update t set v = 1",
		"a.1|LOG:  process 4242 still waiting for ShareLock on transaction 725 after 1000.042 ms",
		"a.1|ERROR:  deadlock detected",
	))
	if len(got) != 3 || !strings.Contains(got[1], `err="deadlock detected"`) {
		t.Errorf("got %q", got)
	}
}
