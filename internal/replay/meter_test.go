package replay

import (
	"bufio"
	"io"
	"net"
	"strings"
	"testing"
)

// chunkServer is a loopback server that greets with greet bytes, then answers each line
// the client sends with reply bytes written in three pieces.
func chunkServer(t *testing.T, greet, reply int) string {
	return serveLoopback(t, func(c net.Conn) {
		defer c.Close()
		if greet > 0 {
			c.Write([]byte(strings.Repeat("g", greet)))
		}
		r := bufio.NewReader(c)
		for {
			if _, err := r.ReadString('\n'); err != nil {
				return
			}
			b := []byte(strings.Repeat("r", reply))
			third := reply / 3
			c.Write(b[:third])
			c.Write(b[third : 2*third])
			c.Write(b[2*third:])
		}
	})
}

// serveLoopback listens on a loopback port until the test ends and hands each connection
// to handle on a goroutine of its own; it returns the address.
func serveLoopback(t *testing.T, handle func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go handle(c)
		}
	}()
	return ln.Addr().String()
}

func dialMeter(t *testing.T, addr string) *meter {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return newMeter(c, newClock())
}

func TestMeterCountsTurnsAndBytes(t *testing.T) {
	m := dialMeter(t, chunkServer(t, 10, 300))
	// The greeting is the first turn: the client "wrote" last (TCP's final ACK).
	if _, err := io.ReadFull(m, make([]byte, 10)); err != nil {
		t.Fatal(err)
	}
	if w := m.counts(); w.RoundTrips != 1 || w.In != 10 || w.Out != 0 {
		t.Errorf("after the greeting: %+v, want 1 round trip, 10 bytes in", w)
	}
	// A statement sent in two writes, answered in three pieces, is one turn.
	from := m.mark()
	m.Write([]byte("sel"))
	m.Write([]byte("ect\n"))
	if _, err := io.ReadFull(m, make([]byte, 300)); err != nil {
		t.Fatal(err)
	}
	w, send, reply := m.span(from)
	if w != (wire{Out: 7, In: 300, RoundTrips: 1}) || send <= 0 || reply < send {
		t.Errorf("one statement: %+v send %d reply %d; want 7 out, 300 in, 1 round trip", w, send, reply)
	}
	// Three statements, each waiting for its reply: three turns.
	from = m.mark()
	for i := 0; i < 3; i++ {
		m.Write([]byte("x\n"))
		if _, err := io.ReadFull(m, make([]byte, 300)); err != nil {
			t.Fatal(err)
		}
	}
	if w, _, _ := m.span(from); w != (wire{Out: 6, In: 900, RoundTrips: 3}) {
		t.Errorf("three statements: %+v", w)
	}
	// Two statements pipelined (both sent before either reply is read): one turn.
	from = m.mark()
	m.Write([]byte("a\nb\n"))
	if _, err := io.ReadFull(m, make([]byte, 600)); err != nil {
		t.Fatal(err)
	}
	if w, _, _ := m.span(from); w.RoundTrips != 1 {
		t.Errorf("pipelined: %+v, want 1 round trip", w)
	}
}

// A client that speaks first (PostgreSQL's startup message) pays one turn for it.
func TestMeterClientFirst(t *testing.T) {
	m := dialMeter(t, chunkServer(t, 0, 9))
	m.Write([]byte("startup\n"))
	if _, err := io.ReadFull(m, make([]byte, 9)); err != nil {
		t.Fatal(err)
	}
	if w := m.counts(); w != (wire{Out: 8, In: 9, RoundTrips: 1}) {
		t.Errorf("%+v, want 1 round trip", w)
	}
}
