package querylog

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	generalHead = "/usr/sbin/mariadbd, Version: 10.11.19-MariaDB. started with:\n" +
		"Tcp port: 3306  Unix socket: /run/mysqld/mysqld.sock\n" +
		"Time\t\t    Id Command\tArgument\n"
	generalOK = generalHead +
		"261208  0:11:56\t    26 Connect\tsbtest@198.18.1.2 on sbtest using TCP/IP\n" +
		"\t\t    26 Query\tselect 1\n"
	csvRecord = `2026-12-08 00:12:24.775 UTC,"u","d",1,"",1.1,3,"idle",,3/4,0,LOG,00000,"statement: select 1",,,,,,,,,"psql","client backend",,0`
	pgLine    = "2026-12-08 00:12:15.320 UTC|sbtest|sbtest|6b174b5f.192c|LOG:  statement: select 1;\n"
)

func TestOpenRefuses(t *testing.T) {
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	w.Write([]byte(generalOK))
	w.Close()
	cases := []struct {
		name, log string
		want      error
		says      []string
	}{
		{"binary", "hello\nworld\x00\x01\x02", ErrBinary, []string{"line 2"}},
		{"gzip", gz.String(), ErrBinary, []string{"gzip"}},
		{"unknown", "just some text\nmore\n", ErrUnknownFormat, []string{"line 1", "mysql-general", "pg-csv", "--format"}},
		{"empty", "", ErrUnknownFormat, []string{"empty"}},
		{"default prefix", "2026-12-08 00:12:15.320 UTC [6450] LOG:  statement: select 1\n", ErrUnknownFormat, []string{"line 1", "log_line_prefix = '%m|%u|%d|%c|'"}},
		{"header only", generalHead, ErrUnknownFormat, []string{"header", "--format"}},
	}
	for _, c := range cases {
		_, err := Open(strings.NewReader(c.log), Options{})
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
			continue
		}
		for _, s := range c.says {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%s: %q does not say %q", c.name, err, s)
			}
		}
	}
	if _, err := Open(strings.NewReader(generalOK), Options{Format: "mysql-binlog"}); !errors.Is(err, ErrUnknownFormat) ||
		!strings.Contains(err.Error(), "mysql-slow") {
		t.Errorf("unknown --format: %v", err)
	}
	if _, err := Open(strings.NewReader(generalOK), Options{MaxEntry: -1}); err == nil {
		t.Error("a negative entry limit is taken")
	}
}

func TestDetectEveryFixture(t *testing.T) {
	for _, fx := range fixtures {
		data, err := os.ReadFile(filepath.Join("testdata", fx.file))
		if err != nil {
			t.Fatal(err)
		}
		data = []byte(strings.TrimLeft(string(stripHandMadeBytes(data)), "\n"))
		if f, err := Detect(data); err != nil || f != fx.format {
			t.Errorf("%s: %s, %v; want %s", fx.file, f, err, fx.format)
		}
	}
}

func stripHandMadeBytes(b []byte) []byte {
	for bytes.HasPrefix(b, []byte("#! ")) {
		_, b, _ = bytes.Cut(b, []byte("\n"))
	}
	return b
}

// TestBadLines: every format stops at its first malformed entry with its line number
// and text, or skips and counts it, reading on.
func TestBadLines(t *testing.T) {
	csvCut := csvRecord[:strings.Index(csvRecord, "select")] // inside the quoted message
	cases := []struct {
		name   string
		format Format
		log    string
		line   int64
		why    string
		after  int // events read with SkipBadLines
	}{
		{"general garbage", MySQLGeneral, generalOK[:len(generalHead)] + "garbage\n" + generalOK[len(generalHead):], 4, "not a general-log entry", 3},
		{"general truncated", MySQLGeneral, generalOK + "\t\t    26 Query\tselect 2", 6, "ends mid-line", 3},
		{"slow garbage", MySQLSlow, "garbage\n# User@Host: a[a] @ x []  Id: 1\n# Query_time: 0.1  Lock_time: 0 Rows_sent: 0  Rows_examined: 0\nSET timestamp=1;\nselect 1;\n", 1, "not a slow-log entry", 3},
		{"slow cut in header", MySQLSlow, "# User@Host: a[a] @ x []  Id: 1\n# Query_time: 0.1  Lock_time: 0 Rows_sent: 0  Rows_examined: 0\n", 1, "cut short", 0},
		{"slow cut in statement", MySQLSlow, "# User@Host: a[a] @ x []  Id: 1\n# Query_time: 0.1  Lock_time: 0 Rows_sent: 0  Rows_examined: 0\nSET timestamp=1;\nselect\n", 1, "no closing ';'", 0},
		{"slow no id", MySQLSlow, "# User@Host: a[a] @ x []\n# Query_time: 0.1  Lock_time: 0 Rows_sent: 0  Rows_examined: 0\nSET timestamp=1;\nselect 1;\n", 1, "thread id", 0},
		{"slow bad number", MySQLSlow, "# User@Host: a[a] @ x []  Id: 1\n# Query_time: 0.x  Lock_time: 0 Rows_sent: 0  Rows_examined: 0\nSET timestamp=1;\nselect 1;\n", 2, "Query_time", 0},
		{"stderr garbage", PGStderr, pgLine + "TopMemoryContext: 1234 total\n" + pgLine, 2, "pgreplay's format", 4},
		{"stderr truncated", PGStderr, pgLine + strings.TrimSuffix(pgLine, "\n"), 2, "ends mid-line", 3},
		{"stderr bad parameters", PGStderr, strings.Replace(pgLine, "statement: select 1;", "execute <unnamed>: select $1", 1) +
			"2026-12-08 00:12:15.320 UTC|sbtest|sbtest|6b174b5f.192c|DETAIL:  parameters: $1 = 'open\n", 2, "closing quote", 3},
		{"csv cut in quotes", PGCSV, csvRecord + "\n" + csvCut + "\n1\n", 2, "inside a quoted field", 3},
		{"csv truncated", PGCSV, csvRecord + "\n" + csvCut, 2, "ends mid-line", 3},
		{"csv short record", PGCSV, "2026-12-08 00:12:24.775 UTC,u,d,1\n", 1, "4 fields", 0},
	}
	for _, c := range cases {
		_, _, err := readAll(t, strings.NewReader(c.log), Options{Format: c.format})
		var bad *BadLineError
		if !errors.As(err, &bad) || bad.Line != c.line || !strings.Contains(bad.Why, c.why) {
			t.Errorf("%s: %v, want line %d: %s", c.name, err, c.line, c.why)
			continue
		}
		if !strings.Contains(err.Error(), "line ") {
			t.Errorf("%s: %q does not name the line", c.name, err)
		}
		evs, l, err := readAll(t, strings.NewReader(c.log), Options{Format: c.format, SkipBadLines: true})
		if err != nil || l.Skipped() != 1 || len(evs) != c.after {
			t.Errorf("%s skipping: %v, skipped %d, %d events (want 1, %d)", c.name, err, l.Skipped(), len(evs), c.after)
		}
	}
}

// TestLongLine: a line over the entry limit is a bad line, and the reader goes on after
// it (the rest of it is read and dropped, not kept).
func TestLongLine(t *testing.T) {
	long := "\t\t    26 Query\tselect '" + strings.Repeat("x", 300<<10) + "'\n"
	log := generalOK + long + "\t\t    26 Query\tselect 3\n"
	_, _, err := readAll(t, strings.NewReader(log), Options{MaxEntry: 100 << 10})
	var bad *BadLineError
	if !errors.As(err, &bad) || bad.Line != 6 || len(bad.Text) > 200 || !strings.Contains(bad.Why, "longer than") {
		t.Fatalf("got %v", err)
	}
	evs, l, err := readAll(t, strings.NewReader(log), Options{MaxEntry: 100 << 10, SkipBadLines: true})
	if err != nil || l.Skipped() != 1 || len(evs) != 4 || evs[2].SQL != "select 3" {
		t.Fatalf("skipping: %v %d %v", err, l.Skipped(), evs)
	}
	evs, _, err = readAll(t, strings.NewReader(log), Options{})
	if err != nil || len(evs[2].SQL) != len(long)-len("\t\t    26 Query\t")-1 {
		t.Fatalf("under the default limit: %v", err)
	}
}

func TestBadLineErrorText(t *testing.T) {
	err := badLine(7, []byte(strings.Repeat("y", 300)), "why")
	if err.Line != 7 || len(err.Text) != 200 || !strings.HasPrefix(err.Error(), "line 7: why: \"yyy") {
		t.Errorf("%+v: %s", err, err)
	}
}
