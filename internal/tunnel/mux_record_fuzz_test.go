package tunnel

import (
	"bytes"
	"errors"
	"net"
	"testing"
	"time"
)

// The seed corpus in testdata/fuzz/FuzzMuxRecords is the raw bytes of real mux frames (the
// records of one frame each: opens, data, credit, binlog, fin) from a run against a real
// MariaDB; TestCaptureFuzzSeeds rewrites it (frame_fuzz_test.go has the command).
//
// Run the target with: go test -run '^$' -fuzz '^FuzzMuxRecords$' ./internal/tunnel/

// FuzzMuxRecords: the record parser consumes exactly the bytes of each record it returns
// (its header and payload encode back to them) and fails only with ErrCorrupt; the same
// bytes dispatched to an entry's link with three open streams fail only with ErrCorrupt,
// leave no stream holding more than its window, and end a stream only by its own records.
// Nothing panics.
func FuzzMuxRecords(f *testing.F) {
	f.Fuzz(func(t *testing.T, raw []byte) {
		for p := raw; len(p) > 0; {
			r, rest, err := nextRecord(p)
			if err != nil {
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("record parse error %v is not ErrCorrupt", err)
				}
				break
			}
			used := p[:len(p)-len(rest)]
			again := append(appendRecord(nil, r.kind, r.id, int(r.n)), r.payload...)
			if !bytes.Equal(again, used) {
				t.Fatalf("%s record of stream %d: consumed % x, encodes back to % x", r.kind, r.id, used, again)
			}
			p = rest
		}

		m := fuzzLink(3)
		_, err := m.dispatch(raw)
		if err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("dispatch error %v is not ErrCorrupt", err)
		}
		ended := recordStreams(raw)
		for id := uint32(1); id <= 3; id++ {
			st := m.streams[id]
			if st == nil {
				if !ended[id] {
					t.Fatalf("stream %d ended without a record of its own", id)
				}
				continue
			}
			if st.outBytes > st.window {
				t.Fatalf("stream %d holds %d bytes for its peer, past its window %d", id, st.outBytes, st.window)
			}
		}
	})
}

// fuzzLink is an entry's link with streams 1..n open, each to a local peer that takes
// nothing (deliver queues), and no WAN: what dispatch does to it stays in memory.
func fuzzLink(n int) *muxLink {
	m := &muxLink{t: &Tunnel{}, role: Entry, streams: map[uint32]*stream{}, done: make(chan struct{}),
		wake: make(chan struct{}, 1), roundTrip: func() time.Duration { return 0 }}
	for id := uint32(1); id <= uint32(n); id++ {
		m.streams[id] = newStream(m, id, closeOnlyConn{})
		m.lastID = id
	}
	return m
}

// recordStreams reports the streams that records in raw name, as far as it parses.
func recordStreams(raw []byte) map[uint32]bool {
	ids := map[uint32]bool{}
	for len(raw) > 0 {
		r, rest, err := nextRecord(raw)
		if err != nil {
			break
		}
		ids[r.id] = true
		raw = rest
	}
	return ids
}

// closeOnlyConn is a local peer that is only ever closed: without a syscall.Conn, deliver
// queues what it gets for outLoop, which the fuzz target does not run.
type closeOnlyConn struct{ net.Conn }

func (closeOnlyConn) Close() error { return nil }
