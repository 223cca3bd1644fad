package replay

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"
)

func scanFile(t *testing.T, path string) (*ScanResult, error) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return Scan(context.Background(), newGeneralReader(f))
}

// A real general log (testdata/mariadb-general-mixed.log, captured from MariaDB 10.11):
// session 25 was open before the log began, 27's login failed.
func TestScanGeneralLog(t *testing.T) {
	r, err := scanFile(t, "testdata/mariadb-general-mixed.log")
	if err != nil {
		t.Fatal(err)
	}
	if r.Sessions != 3 || r.WithoutConnect != 1 || r.Statements != 14 || r.Lines != 28 {
		t.Errorf("sessions %d (%d without Connect), statements %d, lines %d; want 3 (1), 14, 28",
			r.Sessions, r.WithoutConnect, r.Statements, r.Lines)
	}
	if r.NeverConnectedCount != 1 || r.NeverConnected[0] != (LoggedSession{Session: "27", Line: 25}) {
		t.Errorf("never connected %+v", r.NeverConnected)
	}
	if r.Span.Seconds() != 2 || r.First.IsZero() || r.Last.Sub(r.First).Seconds() != 2 {
		t.Errorf("span %s, %s to %s", r.Span, r.First, r.Last)
	}
	if r.Longest.Line != 16 || r.Longest.Len != 61 || !strings.HasPrefix(r.Longest.Start, "insert into sbtest1") {
		t.Errorf("longest %+v", r.Longest)
	}
	if err := r.CheckMaxPacket(r.Longest.Len + 1); err != nil {
		t.Errorf("a statement that fits: %v", err)
	}
	var tl *TooLongError
	if err := r.CheckMaxPacket(r.Longest.Len); !errors.As(err, &tl) || tl.Line != 16 {
		t.Errorf("a statement that does not fit: %v", err)
	}
}

func TestScanBadLines(t *testing.T) {
	if _, err := Scan(context.Background(), newBadReader(false)); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("err = %v, want line 2 named", err)
	}
	r, err := Scan(context.Background(), newBadReader(true))
	if err != nil || r.BadLines != 1 || r.Statements != 1 || r.Sessions != 1 {
		t.Errorf("skipped: %v %+v", err, r)
	}
}

// The generated log is a general log as MariaDB writes it: exactly its lines, every
// session connecting first and quitting last, and it replays whole.
func TestGenerateGeneralLog(t *testing.T) {
	var buf bytes.Buffer
	st, err := GenerateGeneralLog(&buf, GenOptions{Lines: 5000, Sessions: 8, Tables: 2, TableSize: 1000, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if n := int64(strings.Count(buf.String(), "\n")); n != 5000 || st.Lines != 5000 || st.Statements != 5000-3-16 {
		t.Errorf("%d lines, stats %+v", n, st)
	}
	if !strings.HasPrefix(strings.Split(buf.String(), "\n")[3], "260101  0:00:00\t   100 Connect\tsbtest@") {
		t.Errorf("first entry %q", strings.Split(buf.String(), "\n")[3])
	}
	r, err := Scan(context.Background(), newGeneralReader(bytes.NewReader(buf.Bytes())))
	if err != nil || r.Sessions != 8 || r.WithoutConnect != 0 || r.Statements != st.Statements || r.Span.Seconds() != 4 {
		t.Errorf("scan: %v %+v", err, r)
	}
	sum := replayMem(t, memOptions(SpeedMax), newMemServer(), newGeneralReader(bytes.NewReader(buf.Bytes())))
	if sum.Statements != st.Statements || sum.Errors != 0 || sum.Sessions.Replayed != 8 {
		t.Errorf("replay: %+v", sum)
	}
	// Transactions cut by the log's end count too: at most one a session.
	if sum.Transactions < st.Transactions || sum.Transactions > st.Transactions+8 {
		t.Errorf("replayed %d transactions, the log has %d whole ones", sum.Transactions, st.Transactions)
	}
	if _, err := GenerateGeneralLog(&buf, GenOptions{Lines: 10, Sessions: 8, Tables: 1, TableSize: 100}); err == nil {
		t.Error("a log too short for its sessions was generated")
	}
}
