package querylog

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden event dumps in testdata/")

// dump writes an event as one line, naming only the fields that are set.
func dump(ev Event) string {
	var b strings.Builder
	fmt.Fprintf(&b, "L%d %s %s at=%s", ev.Line, ev.Session, ev.Kind, ev.At)
	if !ev.Time.IsZero() {
		fmt.Fprintf(&b, " t=%s", ev.Time.UTC().Format(time.RFC3339Nano))
	}
	if ev.Implied {
		b.WriteString(" implied")
	}
	if ev.Duration >= 0 {
		fmt.Fprintf(&b, " dur=%s", ev.Duration)
	}
	if ev.Rows >= 0 {
		fmt.Fprintf(&b, " rows=%d", ev.Rows)
	}
	for _, f := range []struct{ k, v string }{
		{"user", ev.User}, {"db", ev.DB}, {"cmd", ev.Command}, {"stmt", ev.Stmt}, {"err", ev.Err}, {"sql", ev.SQL},
	} {
		if f.v != "" {
			fmt.Fprintf(&b, " %s=%q", f.k, f.v)
		}
	}
	for i, p := range ev.Params {
		if ev.Null[i] {
			fmt.Fprintf(&b, " $%d=NULL", i+1)
		} else {
			fmt.Fprintf(&b, " $%d=%q", i+1, p)
		}
	}
	return b.String()
}

// readAll reads every event of a log, the error that ended it, and the log.
func readAll(t *testing.T, r io.Reader, opt Options) ([]Event, *Log, error) {
	t.Helper()
	l, err := Open(r, opt)
	if err != nil {
		return nil, nil, err
	}
	var evs []Event
	for {
		ev, err := l.Next()
		if errors.Is(err, io.EOF) {
			return evs, l, nil
		}
		if err != nil {
			return evs, l, err
		}
		evs = append(evs, ev)
	}
}

// readFixture reads every event of a file in testdata/.
func readFixture(t *testing.T, file string) ([]Event, *Log) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	evs, l, err := readAll(t, stripHandMade(t, file, f), Options{})
	if err != nil {
		t.Fatal(err)
	}
	return evs, l
}

// readDump reads a log given as text and dumps its events.
func readDump(t *testing.T, f Format, log string) []string {
	t.Helper()
	evs, _, err := readAll(t, strings.NewReader(log), Options{Format: f})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ev := range evs {
		out = append(out, dump(ev))
	}
	return out
}

func checkDump(t *testing.T, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// golden compares text with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, text string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if string(want) != text {
		t.Errorf("%s differs from what the reader gives (go test -update rewrites it); got:\n%s", path, text)
	}
}

// The fixtures: real captures from MariaDB 10.11 and PostgreSQL 15 (sysbench
// oltp_read_write, and the sessions mixed.sql and pgmixed.sql sent), and hand-made ones
// for MySQL 8 (their header says where they come from).
var fixtures = []struct {
	file   string
	format Format
}{
	{"mariadb-general-mixed.log", MySQLGeneral},
	{"mariadb-general-sysbench.log", MySQLGeneral},
	{"mariadb-slow-mixed.log", MySQLSlow},
	{"mariadb-slow-sysbench.log", MySQLSlow},
	{"pg-stderr-mixed.log", PGStderr},
	{"pg-stderr-sysbench.log", PGStderr},
	{"pg-csvlog-mixed-sysbench.csv", PGCSV},
	{"mysql8-general.log", MySQLGeneral},
	{"mysql8-slow.log", MySQLSlow},
}

// TestFixturesGolden reads every fixture, detecting its format, and compares the
// events with their golden dump.
func TestFixturesGolden(t *testing.T) {
	for _, fx := range fixtures {
		t.Run(fx.file, func(t *testing.T) {
			evs, l := readFixture(t, fx.file)
			if l.Format() != fx.format {
				t.Errorf("detected %s, want %s", l.Format(), fx.format)
			}
			var b strings.Builder
			for _, ev := range evs {
				b.WriteString(dump(ev))
				b.WriteByte('\n')
			}
			golden(t, fx.file+".events", b.String())
		})
	}
}

// stripHandMade takes off the "#! " lines that open a hand-made fixture (they say where
// it comes from: no server wrote it), and checks a hand-made fixture has them.
func stripHandMade(t *testing.T, name string, r io.Reader) io.Reader {
	t.Helper()
	if !strings.HasPrefix(name, "mysql8-") {
		return r
	}
	data, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	if !strings.HasPrefix(text, "#! ") {
		t.Fatalf("%s: a hand-made fixture starts with \"#! \" lines saying where it comes from", name)
	}
	for strings.HasPrefix(text, "#! ") {
		_, text, _ = strings.Cut(text, "\n")
	}
	return strings.NewReader(text)
}
