package replay

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/querylog"
)

// memServer is a server in memory: each statement is written to and answered through a
// meter over nopConn (one round trip), after hook (may be nil) returns. It records when
// each statement (by log line) started and ended.
type memServer struct {
	clk   *clock
	hook  func(ev *querylog.Event)
	mu    sync.Mutex
	start map[int64]int64
	end   map[int64]int64
}

func newMemServer() *memServer {
	return &memServer{start: map[int64]int64{}, end: map[int64]int64{}}
}

func (s *memServer) probe(context.Context) (serverInfo, error) {
	return serverInfo{Version: "mem"}, nil
}

func (s *memServer) connect(_ context.Context, _ string, clk *clock) (dbConn, *meter, error) {
	s.mu.Lock()
	s.clk = clk
	s.mu.Unlock()
	m := newMeter(nopConn{}, clk)
	return &memConn{s: s, m: m}, m, nil
}

func (s *memServer) times(line int64) (start, end int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.start[line], s.end[line]
}

type memConn struct {
	s   *memServer
	m   *meter
	buf [64]byte
}

func (c *memConn) exec(ev *querylog.Event, _ Class) (int64, error) {
	t0 := c.m.clock.now()
	c.m.Write([]byte(ev.SQL))
	if c.s.hook != nil {
		c.s.hook(ev)
	}
	c.m.Read(c.buf[:])
	if ev.Line < 100 { // the timing tests' lines, not the memory test's million
		c.s.mu.Lock()
		c.s.start[ev.Line], c.s.end[ev.Line] = t0, c.m.clock.now()
		c.s.mu.Unlock()
	}
	return 1, nil
}

func (c *memConn) close() {}

// nopConn is a net.Conn that takes every write and answers every read at once.
type nopConn struct{ net.Conn }

func (nopConn) Write(p []byte) (int, error)      { return len(p), nil }
func (nopConn) Read(p []byte) (int, error)       { return len(p), nil }
func (nopConn) SetDeadline(time.Time) error      { return nil }
func (nopConn) Close() error                     { return nil }
func (nopConn) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (nopConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (nopConn) SetReadDeadline(time.Time) error  { return nil }
func (nopConn) SetWriteDeadline(time.Time) error { return nil }

func memOptions(speed Speed) Options {
	return Options{Log: "mem.log", Format: querylog.MySQLGeneral, Speed: speed,
		Target: Target{Engine: engine.MariaDB, Socket: "/nonexistent", User: "u"}}
}

func replayMem(t *testing.T, o Options, srv *memServer, rd querylog.Reader) *Summary {
	t.Helper()
	sum, err := replayWith(context.Background(), o, srv, rd, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// Think time is the recorded gap scaled by the speed, counted from the end of the
// previous statement; a session starts at its recorded offset, scaled too.
func TestSpeedScalesThinkTime(t *testing.T) {
	evs := []querylog.Event{
		connect(1, "1", 0), query(2, "1", 0, "select 1"), query(3, "1", time.Second, "select 2"),
		connect(4, "2", 2*time.Second), query(5, "2", 2*time.Second, "select 3"),
		query(6, "1", 2*time.Second, "select 4"),
	}
	srv := newMemServer()
	srv.hook = func(ev *querylog.Event) {
		if ev.Line == 2 {
			time.Sleep(30 * time.Millisecond) // the next statement waits for this one
		}
	}
	sum := replayMem(t, memOptions(10), srv, &sliceReader{evs: evs})
	if sum.Statements != 4 || sum.Sessions.Replayed != 2 {
		t.Fatalf("summary %+v", sum)
	}
	_, end2 := srv.times(2)
	start3, end3 := srv.times(3)
	start5, _ := srv.times(5)
	start6, _ := srv.times(6)
	ms := func(ns int64) time.Duration { return time.Duration(ns) }
	// 1 s recorded at speed 10: 100 ms after the previous statement ended, never sooner.
	if gap := ms(start3 - end2); gap < 100*time.Millisecond || gap > 900*time.Millisecond {
		t.Errorf("line 3 started %s after line 2 ended; want 100 ms (1 s at speed 10)", gap)
	}
	if gap := ms(start6 - end3); gap < 100*time.Millisecond || gap > 900*time.Millisecond {
		t.Errorf("line 6 started %s after line 3 ended; want 100 ms", gap)
	}
	// Session 2 connects 2 s into the log: 200 ms into the replay (the clock starts
	// with it).
	if at := ms(start5); at < 200*time.Millisecond || at > 1800*time.Millisecond {
		t.Errorf("session 2 began %s into the replay; want 200 ms", at)
	}
}

// At speed max nothing waits, but a statement still waits for the one before it.
func TestSpeedMaxDoesNotWait(t *testing.T) {
	evs := []querylog.Event{connect(1, "1", 0), query(2, "1", 0, "select 1"),
		query(3, "1", 5*time.Second, "select 2"), query(4, "1", 10*time.Second, "select 3")}
	srv := newMemServer()
	srv.hook = func(ev *querylog.Event) {
		if ev.Line == 2 {
			time.Sleep(20 * time.Millisecond)
		}
	}
	start := time.Now()
	sum := replayMem(t, memOptions(SpeedMax), srv, &sliceReader{evs: evs})
	if d := time.Since(start); d > 4*time.Second || sum.Statements != 3 {
		t.Errorf("a 10 s log at max took %s, replayed %d", d, sum.Statements)
	}
	_, end2 := srv.times(2)
	if start3, _ := srv.times(3); start3 < end2 {
		t.Errorf("line 3 started before line 2 ended")
	}
}

// --for stops the replay: what was not replayed, in the queues and in the rest of the
// log, is counted, and the sessions that had not begun.
func TestForStops(t *testing.T) {
	var evs []querylog.Event
	evs = append(evs, connect(1, "1", 0))
	for i := 0; i < 10; i++ {
		evs = append(evs, query(int64(2+i), "1", time.Duration(i)*time.Second, fmt.Sprintf("select %d", i)))
	}
	evs = append(evs, connect(20, "2", 5*time.Second), query(21, "2", 5*time.Second, "select 1"),
		connect(22, "3", 9*time.Second), query(23, "3", 9*time.Second, "select 1"))
	o := memOptions(1)
	o.For = 250 * time.Millisecond
	start := time.Now()
	sum := replayMem(t, o, newMemServer(), &sliceReader{evs: evs})
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("--for 250ms took %s", d)
	}
	if sum.Stopped != "--for 250ms" || sum.Statements != 1 || sum.NotReplayed != 11 || sum.LastLine != 23 {
		t.Errorf("stopped %q, %d replayed, %d not, last line %d; want --for 250ms, 1, 11, 23",
			sum.Stopped, sum.Statements, sum.NotReplayed, sum.LastLine)
	}
	if s := sum.Sessions; s.Replayed != 1 || s.NotStarted != 2 {
		t.Errorf("sessions %+v; want 1 replayed, 2 not started", s)
	}
}

// syntheticReader makes n Query events over sessions sessions (a Connect each first),
// each statement about 100 bytes, made as read so the stream itself holds nothing.
type syntheticReader struct {
	n, sessions int
	i           int
	read        atomic.Int64
}

func (r *syntheticReader) Next() (querylog.Event, error) {
	defer r.read.Add(1)
	if r.i < r.sessions {
		r.i++
		return connect(int64(r.i), fmt.Sprint(r.i), 0), nil
	}
	k := r.i - r.sessions
	if k >= r.n {
		return querylog.Event{}, io.EOF
	}
	r.i++
	return query(int64(r.i), fmt.Sprint(1+k%r.sessions), 0,
		fmt.Sprintf("SELECT c, pad FROM sbtest1 WHERE id BETWEEN %d AND %d ORDER BY c LIMIT 10 /* %020d */", k, k+99, k)), nil
}

// heapInUse is the live heap after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// A million statements, read far faster than they replay, hold memory to the budget: the
// reader waits once it is spent, and the heap stays bounded however long the log.
func TestQueueBoundsMemory(t *testing.T) {
	const budget = 4 << 20
	base := heapInUse()
	gate := make(chan struct{})
	srv := newMemServer()
	srv.hook = func(*querylog.Event) { <-gate }
	rd := &syntheticReader{n: 1_000_000, sessions: 50}
	o := memOptions(SpeedMax)
	o.QueueBudget = budget
	var sum *Summary
	done := make(chan error, 1)
	go func() {
		var err error
		sum, err = replayWith(context.Background(), o, srv, rd, &bytes.Buffer{})
		done <- err
	}()
	// Wait until the reader stops reading: the budget is spent.
	for last := int64(-1); ; time.Sleep(50 * time.Millisecond) {
		if n := rd.read.Load(); n == last && n > 0 {
			break
		}
		last = rd.read.Load()
	}
	held := rd.read.Load()
	if held >= 1_000_000/2 {
		t.Fatalf("the reader read %d events before it stopped: the budget did not hold it", held)
	}
	if grew := int64(heapInUse()) - int64(base); grew > 3*budget {
		t.Errorf("with the reader held at %d events the heap grew %d MiB, want under %d MiB", held, grew>>20, 3*budget>>20)
	}
	close(gate)
	var peak int64
	sample := time.NewTicker(100 * time.Millisecond)
	defer sample.Stop()
	for running := true; running; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			running = false
		case <-sample.C:
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			peak = max(peak, int64(m.HeapAlloc)-int64(base))
		}
	}
	if sum.Statements != 1_000_000 || sum.Sessions.Replayed != 50 {
		t.Errorf("replayed %d statements in %d sessions", sum.Statements, sum.Sessions.Replayed)
	}
	// Garbage between collections counts here too: a generous bound, still far below the
	// ~250 MiB the events would take if the reader were not held back.
	if peak > 64<<20 {
		t.Errorf("the heap peaked %d MiB above its start while replaying", peak>>20)
	}
}

// A statement is due its think time after the previous one ended here: the gap between
// the two in the log, less the previous one's logged duration, scaled by the speed.
func TestDue(t *testing.T) {
	r := &replayer{start: 1000, o: Options{Speed: 10}}
	s := &session{r: r}
	ev := query(1, "1", 3*time.Second, "select 1")
	if got := s.due(&ev); got != 1000+int64(300*time.Millisecond) {
		t.Errorf("a session's first event: due %d, want its offset at speed 10", got)
	}
	s.begun, s.prevAt, s.prevDur, s.prevEnd = true, time.Second, 400*time.Millisecond, 5e9
	if got := s.due(&ev); got != 5e9+int64(160*time.Millisecond) {
		t.Errorf("due %d, want (3 s - 1 s - 0.4 s) / 10 after the previous end", got)
	}
	s.prevDur = 5 * time.Second // the log's clock is coarser than the duration
	if got := s.due(&ev); got != 5e9 {
		t.Errorf("due %d, want no negative think time", got)
	}
	r.o.Speed = SpeedMax
	s.prevDur = 0
	if got := s.due(&ev); got != 5e9 {
		t.Errorf("at max: due %d, want at once", got)
	}
}
