package replay

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/querylog"
)

// fakeOptions are options that reach a fakeMySQL.
func fakeOptions(t *testing.T, f *fakeMySQL) Options {
	return Options{Log: "test.log", Format: querylog.MySQLGeneral, Speed: SpeedMax,
		SessionsFile: filepath.Join(t.TempDir(), "sessions.jsonl"),
		Target:       Target{Engine: engine.MariaDB, Host: "127.0.0.1", Port: f.port(), User: "sbtest", Password: "pw", DB: "sbtest"}}
}

// replayEvents replays evs onto the fake server and decodes what the child would print.
func replayEvents(t *testing.T, o Options, evs []querylog.Event) (*Summary, *decoder, error) {
	t.Helper()
	var out bytes.Buffer
	sum, err := Replay(context.Background(), o, &sliceReader{evs: evs}, &out)
	d := &decoder{}
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if l != "" {
			d.line(l)
		}
	}
	return sum, d, err
}

func mixedSessions() []querylog.Event {
	return []querylog.Event{
		connect(1, "1", 0),
		query(2, "1", 0, "select 1"),
		query(3, "1", 0, "begin"),
		query(4, "2", 0, "insert into t values (1)"), // session 2 was open before the log
		query(5, "1", 0, "update sbtest1 set k=k+1 where id=1"),
		query(6, "1", 0, "select c from sbtest1 where id=2"),
		query(7, "1", 0, "commit"),
		connect(8, "3", 0),
		{Line: 9, Session: "3", Kind: querylog.Connect, Err: "Access denied for user 'sbtest'@'198.18.1.2' (using password: YES)"},
		query(10, "1", 0, "select * from nosuchtable"),
		query(11, "2", 0, "select 2"),
		quit(12, "1", 0),
	}
}

func TestReplayFigures(t *testing.T) {
	f := startFakeMySQL(t)
	f.rows = 3
	o := fakeOptions(t, f)
	sum, d, err := replayEvents(t, o, mixedSessions())
	if err != nil {
		t.Fatal(err)
	}
	if sum.Statements != 8 || sum.NotReplayed != 0 || sum.Transactions != 5 || sum.Errors != 1 {
		t.Errorf("statements %d, not replayed %d, transactions %d, errors %d; want 8, 0, 5 (select 1, begin..commit, the failing select, and session 2's two), 1",
			sum.Statements, sum.NotReplayed, sum.Transactions, sum.Errors)
	}
	if s := sum.Sessions; s.Replayed != 2 || s.NotConnected != 1 || s.Failed != 0 || len(sum.NotConnected) != 1 || sum.NotConnected[0].Line != 8 {
		t.Errorf("sessions %+v, not connected %+v; want 2 replayed and session 3 (line 8) not connected", s, sum.NotConnected)
	}
	if len(sum.ErrorsByKind) != 1 || sum.ErrorsByKind[0].Kind != KindSelect || sum.ErrorsByKind[0].Samples[0].Line != 10 ||
		!strings.Contains(sum.ErrorsByKind[0].Samples[0].Message, "1146") {
		t.Errorf("errors by kind %+v; want the select of line 10, error 1146", sum.ErrorsByKind)
	}
	// One round trip per statement; a connect is TCP's handshake, the greeting and the login.
	if sum.RoundTrips.Statements != 8 || sum.RoundTrips.PerStatement != 1 || sum.RoundTrips.PerTransaction != 8.0/5 {
		t.Errorf("round trips %+v; want 8, 1 per statement, 1.6 per transaction", sum.RoundTrips)
	}
	if sum.Connect.Connections != 2 || sum.Connect.RoundTrips != 6 {
		t.Errorf("connect %+v; want 2 connections of 3 round trips", sum.Connect)
	}
	if got := f.received(); len(got) != 9 { // the probe's and the 8 statements
		t.Errorf("the server got %d statements: %q", len(got), got)
	}
	shapes := map[string]ShapeStat{}
	for _, s := range d.shapes {
		shapes[s.Shape] = s
	}
	// "select 1" and "select 2" are one shape; each COM_QUERY is a 4-byte header, the
	// command byte and the text.
	if s := shapes["select ?"]; s.Count != 2 || s.BytesOut != 2*(4+1+8) || s.RoundTrips != 2 {
		t.Errorf("shape select ?: %+v; want 2 statements, 26 bytes out, 2 round trips", s)
	}
	if d.sum == nil || len(d.shapes) != len(sum.Shapes) || d.sum.Statements != sum.Statements {
		t.Errorf("the printed lines do not decode to the summary")
	}
	var rows int64
	for _, k := range sum.Kinds {
		if k.Kind == KindSelect {
			rows = k.Rows
		}
	}
	if rows != 3*3 { // select 1, select c, select 2 (the failing one has none)
		t.Errorf("select rows = %d, want 9", rows)
	}
	figs := readSessions(t, o.SessionsFile)
	s1 := figs["1"]
	if len(figs) != 2 || s1.Statements != 6 || s1.Transactions != 3 || s1.RoundTrips != 6 || s1.ConnectRoundTrips != 3 ||
		s1.Line != 1 || s1.Errors != 1 || s1.SessionMs <= 0 || figs["2"].Line != 4 {
		t.Errorf("sessions file %+v", figs)
	}
	if sum.Cost.MaxRSSBytes <= 0 || sum.Cost.UserS+sum.Cost.SysS <= 0 {
		t.Errorf("cost %+v", sum.Cost)
	}
}

func readSessions(t *testing.T, path string) map[string]SessionFigures {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]SessionFigures{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var s SessionFigures
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			t.Fatalf("%s: %v", sc.Text(), err)
		}
		out[s.Session] = s
	}
	return out
}

// A connection the server drops is reconnected once; a second loss ends the session and
// its remaining statements are counted as not replayed.
func TestReplayReconnectsOnce(t *testing.T) {
	f := startFakeMySQL(t)
	evs := []querylog.Event{
		connect(1, "1", 0), query(2, "1", 0, "select dropme"), query(3, "1", 0, "select 1"),
		query(4, "1", 0, "select dropme"), query(5, "1", 0, "select 2"), query(6, "1", 0, "select 3"),
	}
	sum, _, err := replayEvents(t, fakeOptions(t, f), evs)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Statements != 3 || sum.NotReplayed != 2 || sum.Errors != 2 || sum.Sessions.Reconnected != 1 || sum.Sessions.Failed != 1 {
		t.Errorf("summary %+v; want 3 replayed, 2 not, 2 errors, 1 reconnect, 1 failed session", sum)
	}
	if len(sum.Sessions.FailedSamples) != 1 || !strings.Contains(sum.Sessions.FailedSamples[0].Message, "second time") {
		t.Errorf("failed samples %+v", sum.Sessions.FailedSamples)
	}
	if sum.Connect.Connections != 2 {
		t.Errorf("connections %d, want 2", sum.Connect.Connections)
	}
}

// A statement that does not fit in max_allowed_packet ends the replay with its line.
func TestReplayTooLong(t *testing.T) {
	f := startFakeMySQL(t)
	f.maxPacket = 100
	evs := []querylog.Event{connect(1, "1", 0), query(2, "1", 0, "select 1"),
		query(3, "1", 0, "insert into t values ('"+strings.Repeat("x", 200)+"')")}
	sum, _, err := replayEvents(t, fakeOptions(t, f), evs)
	var tl *TooLongError
	if !errors.As(err, &tl) || tl.Line != 3 || tl.Max != 100 || !strings.HasPrefix(tl.Start, "insert into t") ||
		!strings.Contains(err.Error(), "log line 3") {
		t.Fatalf("err = %v, want the statement of line 3 refused", err)
	}
	if sum == nil || sum.Statements != 1 || !strings.Contains(sum.Stopped, "max_allowed_packet") {
		t.Errorf("summary %+v", sum)
	}
}

// Replay's errors before anything runs: options, and a server that refuses the login.
func TestReplayRefusesBadOptions(t *testing.T) {
	o := Options{Format: "nope", Target: Target{Engine: engine.Postgres, Compress: true}}
	_, err := Replay(context.Background(), o, &sliceReader{}, &bytes.Buffer{})
	for _, want := range []string{"no log file", `--format "nope"`, "--host", "--user", "--compress"} {
		if !errors.Is(err, ErrBadOptions) || !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v; want it to name %s", err, want)
		}
	}
	f := startFakeMySQL(t)
	f.ln.Close()
	_, err = Replay(context.Background(), fakeOptions(t, f), &sliceReader{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "log in to the server") {
		t.Errorf("closed server: err = %v", err)
	}
}

// A bad line ends the replay with its number, however often Next is called after it (a
// reader ends at its first error); a reader that skips bad lines has them counted.
func TestReplayBadLines(t *testing.T) {
	f := startFakeMySQL(t)
	o := fakeOptions(t, f)
	if _, _, err := replayEventsFrom(t, o, newBadReader(false)); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("bad line without skip: err = %v", err)
	}
	sum, _, err := replayEventsFrom(t, o, newBadReader(true))
	if err != nil || sum.BadLines != 1 || sum.Statements != 1 {
		t.Errorf("skipped: %v %+v", err, sum)
	}
}

// badReader reads a connect (line 1), a bad line 2 and a statement (line 3). Like
// querylog's readers it either skips the bad line and counts it, or stops at it for good.
type badReader struct {
	sliceReader
	skip    bool
	skipped int64
	err     error
}

func newBadReader(skip bool) *badReader {
	return &badReader{sliceReader: sliceReader{evs: []querylog.Event{connect(1, "1", 0), query(3, "1", 0, "select 1")}}, skip: skip}
}

func (r *badReader) Next() (querylog.Event, error) {
	if r.err != nil {
		return querylog.Event{}, r.err
	}
	if r.i == 1 && r.skipped == 0 {
		if !r.skip {
			r.err = &querylog.BadLineError{Line: 2, Text: "garbage", Why: "not an entry"}
			return querylog.Event{}, r.err
		}
		r.skipped++
	}
	return r.sliceReader.Next()
}

func (r *badReader) Skipped() int64 { return r.skipped }

func replayEventsFrom(t *testing.T, o Options, rd querylog.Reader) (*Summary, string, error) {
	t.Helper()
	var out bytes.Buffer
	sum, err := Replay(context.Background(), o, rd, &out)
	return sum, out.String(), err
}
