package tunnel

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"testing"
	"time"
)

// fixedKeys derives distinct keys per direction and epoch from a test secret.
func fixedKeys(t testing.TB) recordKeys {
	return func(entryToExit bool, epoch uint64) (cipher.AEAD, [recordIVLen]byte, error) {
		var key [recordKeyLen]byte
		var iv [recordIVLen]byte
		binary.BigEndian.PutUint64(key[:], epoch)
		if entryToExit {
			key[15], iv[0] = 1, 1
		}
		binary.BigEndian.PutUint64(iv[4:], epoch*7+3)
		block, err := aes.NewCipher(key[:])
		if err != nil {
			t.Fatal(err)
		}
		aead, err := cipher.NewGCM(block)
		return aead, iv, err
	}
}

// recordPair is an entry and an exit recordConn over a TCP connection on loopback.
func recordPair(t *testing.T, keys recordKeys) (entry, exit *recordConn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	a, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	b := <-accepted
	if b == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { a.Close(); b.Close() })
	if entry, err = newRecordConn(a, keys, true, nil); err != nil {
		t.Fatal(err)
	}
	if exit, err = newRecordConn(b, keys, false, nil); err != nil {
		t.Fatal(err)
	}
	return entry, exit
}

// Every byte written arrives in order, whatever the write sizes (empty, one byte, larger
// than a record) and the reader's buffer (smaller than a record: opened in place), across
// rekeys, in both directions.
func TestRecordConnRoundTrip(t *testing.T) {
	entry, exit := recordPair(t, fixedKeys(t))
	entry.rekeyEvery, exit.rekeyEvery = 3, 5
	r := rand.New(rand.NewPCG(3, 4))
	var want bytes.Buffer
	var writes [][]byte
	for _, n := range []int{0, 1, 100, maxRecordPlain - 1, maxRecordPlain, maxRecordPlain + 1, 200 << 10, 7, 4096} {
		p := make([]byte, n)
		for i := range p {
			p[i] = byte(r.IntN(256))
		}
		writes = append(writes, p)
		want.Write(p)
	}
	for _, dir := range []struct {
		name string
		w, r *recordConn
	}{{"entry to exit", entry, exit}, {"exit to entry", exit, entry}} {
		t.Run(dir.name, func(t *testing.T) {
			errc := make(chan error, 1)
			go func() {
				for _, p := range writes {
					if _, err := dir.w.Write(p); err != nil {
						errc <- err
						return
					}
				}
				errc <- nil
			}()
			got := make([]byte, 0, want.Len())
			buf := make([]byte, 1000) // smaller than most records
			for len(got) < want.Len() {
				n, err := dir.r.Read(buf[:1+r.IntN(len(buf))])
				if err != nil {
					t.Fatalf("read after %d bytes: %v", len(got), err)
				}
				got = append(got, buf[:n]...)
			}
			if err := <-errc; err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want.Bytes()) {
				t.Fatalf("read %d bytes differing from the %d written", len(got), want.Len())
			}
			// A rekey record may trail the last data record, unread.
			if w, r := dir.w.seal.epoch, dir.r.open.epoch; r < 2 || w-r > 1 {
				t.Fatalf("epochs: writer sealed in %d, reader opened in %d; want several rekeys, all read", w, r)
			}
		})
	}
}

// A flipped bit anywhere in a record, a record replayed, or records from the other
// direction's keys fail the link with ErrCorrupt; a socket closed inside a record is an
// unexpected EOF.
func TestRecordConnRejects(t *testing.T) {
	keys := fixedKeys(t)
	seal := func(n int, entry bool) []byte {
		var out bytes.Buffer
		c, err := newRecordConn(&sinkConn{w: &out}, keys, entry, nil)
		if err != nil {
			t.Fatal(err)
		}
		for range n {
			c.Write([]byte("select * from sbtest1 where id=42"))
		}
		return out.Bytes()
	}
	good := seal(2, true)
	one := len(good) / 2
	flip := func(i int) []byte {
		b := bytes.Clone(good)
		b[i] ^= 0x10
		return b
	}
	tests := []struct {
		name string
		wire []byte
		want error
	}{
		{"flipped kind", flip(0), ErrCorrupt},
		{"flipped length", flip(2), ErrCorrupt},
		{"flipped ciphertext", flip(5), ErrCorrupt},
		{"flipped tag", flip(one - 1), ErrCorrupt},
		{"second record replayed first", append(bytes.Clone(good[one:]), good[:one]...), ErrCorrupt},
		{"the other direction's records", seal(1, false), ErrCorrupt},
		{"closed inside a record", good[:one+4], io.ErrUnexpectedEOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := newRecordConn(&sinkConn{r: bytes.NewReader(tt.wire)}, keys, false, nil)
			if err != nil {
				t.Fatal(err)
			}
			_, err = io.ReadAll(c)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
}

// drained is true only when the last socket read emptied the socket and no whole record
// or opened plaintext is left above it: the relay loop then waits for epoll.
func TestRecordConnDrained(t *testing.T) {
	keys := fixedKeys(t)
	var wire bytes.Buffer
	w, _ := newRecordConn(&sinkConn{w: &wire}, keys, true, nil)
	w.Write([]byte("one"))
	w.Write([]byte("two"))
	b := wire.Bytes()
	read := func(c *recordConn, size int, want string) {
		t.Helper()
		buf := make([]byte, size)
		if n, err := c.Read(buf); err != nil || string(buf[:n]) != want {
			t.Fatalf("read %q, %v; want %q", buf[:n], err, want)
		}
	}
	// The second record arrives in two reads: after the first, only part of it is here.
	c, _ := newRecordConn(&chunkConn{chunks: [][]byte{b[:len(b)-2], b[len(b)-2:]}}, keys, false, nil)
	read(c, 3, "one")
	if !c.drained() {
		t.Fatal("not drained after a short read left only part of a record")
	}
	read(c, 3, "two")
	if !c.drained() {
		t.Fatal("not drained after the last record")
	}
	// Both records in one read, a buffer for one: the second is whole and waiting.
	c, _ = newRecordConn(&chunkConn{chunks: [][]byte{b}}, keys, false, nil)
	read(c, 3, "one")
	if c.drained() {
		t.Fatal("drained with a whole record buffered")
	}
	// A buffer smaller than the record: the rest of its plaintext is waiting.
	c, _ = newRecordConn(&chunkConn{chunks: [][]byte{b}}, keys, false, nil)
	read(c, 2, "on")
	if c.drained() {
		t.Fatal("drained with opened plaintext waiting")
	}
	read(c, 3, "e")
}

// sinkConn is a net.Conn that writes to w and reads from r.
type sinkConn struct {
	net.Conn
	w io.Writer
	r io.Reader
}

func (s *sinkConn) Write(p []byte) (int, error) { return s.w.Write(p) }
func (s *sinkConn) Read(p []byte) (int, error)  { return s.r.Read(p) }

// chunkConn reads its chunks one per read, then errWouldBlock.
type chunkConn struct {
	net.Conn
	chunks [][]byte
}

func (c *chunkConn) Read(p []byte) (int, error) {
	if len(c.chunks) == 0 {
		return 0, errWouldBlock
	}
	n := copy(p, c.chunks[0])
	c.chunks[0] = c.chunks[0][n:]
	if len(c.chunks[0]) == 0 {
		c.chunks = c.chunks[1:]
	}
	return n, nil
}

// The entry sends its preface and its first records at once; the exit's TLS reads the
// preface without taking the records, which the exit's record connection then opens. Both
// ends derive the same keys from the session's exporter, and the exit sent no ticket.
func TestMuxRecordsAfterPreface(t *testing.T) {
	entryTLS, exitTLS, _ := testCerts(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	exitEnd, err := New(Config{Role: Exit, To: "127.0.0.1:1", Listen: "127.0.0.1:0", TLS: exitTLS, Mux: MuxOn})
	if err != nil {
		t.Fatal(err)
	}
	exitEnd.ln.Close()
	entryEnd, err := New(Config{Role: Entry, To: ln.Addr().String(), Listen: "127.0.0.1:0", TLS: entryTLS, Mux: MuxOn})
	if err != nil {
		t.Fatal(err)
	}
	entryEnd.ln.Close()
	msg := bytes.Repeat([]byte("first frame bytes "), 5000)
	type result struct {
		wan net.Conn
		err error
	}
	done := make(chan result, 1)
	go func() {
		wan, _, err := entryEnd.dialExit(context.Background(), muxPreface)
		if err == nil {
			_, err = wan.Write(msg) // at once, behind the preface
		}
		done <- result{wan, err}
	}()
	conn, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	time.Sleep(50 * time.Millisecond) // the records are queued behind the preface
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	wan, mux, err := exitEnd.acceptEntry(ctx, conn)
	if err != nil || !mux {
		t.Fatalf("acceptEntry: mux %v, %v", mux, err)
	}
	rc, ok := wan.(*recordConn)
	if !ok {
		t.Fatalf("exit's wan is %T, want *recordConn", wan)
	}
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(rc, got); err != nil || !bytes.Equal(got, msg) {
		t.Fatalf("exit read the entry's first records: %v (equal %v)", err, bytes.Equal(got, msg))
	}
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	defer r.wan.Close()
	if _, err := rc.Write([]byte("reply")); err != nil {
		t.Fatal(err)
	}
	reply := make([]byte, 5)
	if _, err := io.ReadFull(r.wan, reply); err != nil || string(reply) != "reply" {
		t.Fatalf("entry read %q, %v", reply, err)
	}
	if !exitEnd.cfg.TLS.SessionTicketsDisabled {
		t.Fatal("the exit's TLS config sends session tickets")
	}
}

// With Switches.TLSRecords (WIRELAB_TUNNEL_RECORDS=tls) the entry keeps the link in
// crypto/tls's records, and the exit serves it so.
func TestMuxRecordsOff(t *testing.T) {
	entryTLS, exitTLS, _ := testCerts(t)
	exit := startTunnel(t, Config{Role: Exit, To: echoServer(t), TLS: exitTLS})
	entry := startTunnel(t, Config{Role: Entry, To: exit.Addr().String(), Mux: MuxOn, TLS: entryTLS, Switches: Switches{TLSRecords: true}})
	data := bytes.Repeat([]byte("83868641912-28773972837-"), 2000)
	if got := exchange(t, entry.Addr().String(), data); !bytes.Equal(got, data) {
		t.Fatalf("echo over crypto/tls records differs: %d bytes, want %d", len(got), len(data))
	}
}
