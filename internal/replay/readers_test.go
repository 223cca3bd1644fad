package replay

import (
	"io"
	"os"
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

// newGeneralReader reads a MariaDB general log with querylog's reader.
func newGeneralReader(r io.Reader) querylog.Reader {
	l, err := querylog.Open(r, querylog.Options{Format: querylog.MySQLGeneral})
	if err != nil {
		panic(err)
	}
	return l
}

// openGeneral is the child's opener in these tests: querylog's, as the cli's.
func openGeneral(path string, f querylog.Format, skipBad bool) (querylog.Reader, io.Closer, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	l, err := querylog.Open(file, querylog.Options{Format: f, SkipBadLines: skipBad})
	if err != nil {
		file.Close()
		return nil, nil, err
	}
	return l, file, nil
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
