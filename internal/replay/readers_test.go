package replay

import (
	"bufio"
	"io"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/wirelab/wirelab/internal/querylog"
)

// sliceReader is a querylog.Reader over events in memory.
type sliceReader struct {
	evs []querylog.Event
	i   int
}

func (r *sliceReader) Next() (querylog.Event, error) {
	if r.i >= len(r.evs) {
		return querylog.Event{}, io.EOF
	}
	r.i++
	return r.evs[r.i-1], nil
}

// generalReader is a minimal reader of the MariaDB general log for these tests (the
// querylog package has the real one): Connect, Query, Init DB (as USE), Execute (as the
// statement it shows) and Quit; Prepare and Close stmt are left out.
type generalReader struct {
	sc      *bufio.Scanner
	line    int64
	pending string // a line read ahead
	pendNo  int64
	first   time.Time
	now     time.Time
}

var generalEntry = regexp.MustCompile(`^(?:(\d{6}) +(\d{1,2}):(\d\d):(\d\d))?\t\t? *(\d+) ([A-Za-z ]+?)\t(.*)$`)

func newGeneralReader(r io.Reader) *generalReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	return &generalReader{sc: sc}
}

func openGeneral(path string, _ querylog.Format, _ bool) (querylog.Reader, io.Closer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	return newGeneralReader(f), f, nil
}

func (g *generalReader) readLine() (string, int64, bool) {
	if g.pendNo > 0 {
		l, n := g.pending, g.pendNo
		g.pendNo = 0
		return l, n, true
	}
	if !g.sc.Scan() {
		return "", 0, false
	}
	g.line++
	return g.sc.Text(), g.line, true
}

func (g *generalReader) Next() (querylog.Event, error) {
	for {
		l, n, ok := g.readLine()
		if !ok {
			return querylog.Event{}, io.EOF
		}
		m := generalEntry.FindStringSubmatch(l)
		if m == nil {
			continue // the header, or a line this minimal reader does not know
		}
		if m[1] != "" {
			t, _ := time.Parse("060102 15:04:05", m[1]+" "+twoDigits(m[2])+":"+m[3]+":"+m[4])
			if g.first.IsZero() {
				g.first = t
			}
			g.now = t
		}
		arg := g.continuation(m[7])
		ev := querylog.Event{Line: n, Session: m[5], At: g.now.Sub(g.first), Time: g.now, SQL: arg,
			Duration: -1, Rows: -1}
		switch m[6] {
		case "Connect":
			ev.Kind, ev.SQL = querylog.Connect, ""
			if strings.HasPrefix(arg, "Access denied") {
				ev.SQL = arg
			} else if _, rest, ok := strings.Cut(arg, " on "); ok {
				ev.DB, _, _ = strings.Cut(rest, " ")
			}
		case "Query", "Execute":
			ev.Kind = querylog.Query
		case "Init DB":
			ev.Kind, ev.SQL = querylog.Query, "USE "+arg
		case "Quit":
			ev.Kind, ev.SQL = querylog.Quit, ""
		default:
			continue
		}
		return ev, nil
	}
}

// continuation adds the lines that follow an entry and are not entries themselves.
func (g *generalReader) continuation(arg string) string {
	for {
		l, n, ok := g.readLine()
		if !ok {
			return arg
		}
		if generalEntry.MatchString(l) {
			g.pending, g.pendNo = l, n
			return arg
		}
		arg += "\n" + l
	}
}

func twoDigits(s string) string {
	if len(s) == 1 {
		return "0" + s
	}
	return s
}

// query is a Query event for tests.
func query(line int64, session string, at time.Duration, sql string) querylog.Event {
	return querylog.Event{Line: line, Session: session, Kind: querylog.Query, At: at, SQL: sql, Duration: -1, Rows: -1}
}

func connect(line int64, session string, at time.Duration) querylog.Event {
	return querylog.Event{Line: line, Session: session, Kind: querylog.Connect, At: at, Duration: -1, Rows: -1}
}

func quit(line int64, session string, at time.Duration) querylog.Event {
	return querylog.Event{Line: line, Session: session, Kind: querylog.Quit, At: at, Duration: -1, Rows: -1}
}
