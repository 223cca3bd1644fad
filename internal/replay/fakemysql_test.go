package replay

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// fakeMySQL is enough of a MySQL server for the driver: a greeting, any login accepted,
// COM_QUERY answered with an OK packet, a result set (for SELECT and SHOW) or an error
// (for a statement naming nosuchtable). A statement naming dropme closes the connection
// without a reply. It records every statement per connection.
type fakeMySQL struct {
	ln        net.Listener
	maxPacket int
	rows      int // rows of every SELECT's result set but the probe's
	record    bool
	mu        sync.Mutex
	logins    int
	queries   []string // in the order they arrived, over all connections
	wg        sync.WaitGroup
}

func startFakeMySQL(t testing.TB) *fakeMySQL {
	t.Helper()
	f, err := newFakeMySQL()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.close)
	return f
}

// newFakeMySQL listens on a loopback port; close stops it.
func newFakeMySQL() (*fakeMySQL, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	f := &fakeMySQL{ln: ln, maxPacket: 1 << 20, rows: 1, record: true}
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		for id := uint32(1); ; id++ {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			f.wg.Add(1)
			go func() { defer f.wg.Done(); f.serve(c, id) }()
		}
	}()
	return f, nil
}

func (f *fakeMySQL) close() { f.ln.Close(); f.wg.Wait() }

func (f *fakeMySQL) port() int { return f.ln.Addr().(*net.TCPAddr).Port }

func (f *fakeMySQL) received() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.queries...)
}

// mysqlPacketWriter writes packets with increasing sequence numbers.
type mysqlPacketWriter struct {
	w   *bufio.Writer
	seq byte
}

func (p *mysqlPacketWriter) packet(payload []byte) {
	h := []byte{byte(len(payload)), byte(len(payload) >> 8), byte(len(payload) >> 16), p.seq}
	p.seq++
	p.w.Write(h)
	p.w.Write(payload)
}

func readMySQLPacket(r *bufio.Reader) ([]byte, error) {
	var h [4]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return nil, err
	}
	b := make([]byte, int(h[0])|int(h[1])<<8|int(h[2])<<16)
	_, err := io.ReadFull(r, b)
	return b, err
}

const fakeCaps = 0x1 | 0x4 | 0x8 | 0x200 | 0x2000 | 0x8000 | 0x20000 | 0x80000

func greeting(id uint32) []byte {
	b := []byte{10}
	b = append(b, "10.11.0-fake\x00"...)
	b = binary.LittleEndian.AppendUint32(b, id)
	b = append(b, "abcdefgh\x00"...)
	b = binary.LittleEndian.AppendUint16(b, fakeCaps&0xffff)
	b = append(b, 0x21, 0x02, 0x00)
	b = binary.LittleEndian.AppendUint16(b, fakeCaps>>16)
	b = append(b, 21)
	b = append(b, make([]byte, 10)...)
	b = append(b, "ijklmnopqrst\x00"...)
	return append(b, "mysql_native_password\x00"...)
}

func okPacket(affected byte) []byte { return []byte{0, affected, 0, 2, 0, 0, 0} }

func lenenc(b []byte, s string) []byte { return append(append(b, byte(len(s))), s...) }

func (f *fakeMySQL) serve(c net.Conn, id uint32) {
	defer c.Close()
	r, w := bufio.NewReader(c), bufio.NewWriter(c)
	p := &mysqlPacketWriter{w: w}
	p.packet(greeting(id))
	w.Flush()
	if _, err := readMySQLPacket(r); err != nil {
		return
	}
	f.mu.Lock()
	f.logins++
	f.mu.Unlock()
	p.seq = 2
	p.packet(okPacket(0))
	w.Flush()
	for {
		b, err := readMySQLPacket(r)
		if err != nil || len(b) == 0 || b[0] == 1 { // COM_QUIT
			return
		}
		p.seq = 1
		if b[0] != 3 { // anything but COM_QUERY: OK
			p.packet(okPacket(0))
			w.Flush()
			continue
		}
		q := string(b[1:])
		if !f.query(p, q) {
			return
		}
		w.Flush()
	}
}

// query answers one statement; false closes the connection.
func (f *fakeMySQL) query(p *mysqlPacketWriter, q string) bool {
	lq := strings.ToLower(q)
	if f.record {
		f.mu.Lock()
		f.queries = append(f.queries, q)
		f.mu.Unlock()
	}
	switch {
	case strings.Contains(lq, "dropme"):
		return false
	case strings.Contains(lq, "nosuchtable"):
		e := []byte{0xff}
		e = binary.LittleEndian.AppendUint16(e, 1146)
		p.packet(append(e, "#42S02Table 'sbtest.nosuchtable' doesn't exist"...))
	case strings.HasPrefix(lq, "select version(), @@max_allowed_packet"):
		resultSet(p, []string{"version", "max"}, [][]string{{"10.11.0-fake", strconv.Itoa(f.maxPacket)}})
	case strings.HasPrefix(lq, "select") || strings.HasPrefix(lq, "show"):
		rows := make([][]string, f.rows)
		for i := range rows {
			rows[i] = []string{"row-" + strconv.Itoa(i) + "-0123456789"}
		}
		resultSet(p, []string{"c"}, rows)
	default:
		p.packet(okPacket(1))
	}
	return true
}

func resultSet(p *mysqlPacketWriter, cols []string, rows [][]string) {
	p.packet([]byte{byte(len(cols))})
	for _, c := range cols {
		d := lenenc(nil, "def")
		for _, s := range []string{"sbtest", "t", "t", c, c} {
			d = lenenc(d, s)
		}
		d = append(d, 0x0c, 0x21, 0, 0, 1, 0, 0, 0xfd, 0, 0, 0, 0, 0)
		p.packet(d)
	}
	eof := []byte{0xfe, 0, 0, 2, 0}
	p.packet(eof)
	for _, r := range rows {
		var b []byte
		for _, v := range r {
			b = lenenc(b, v)
		}
		p.packet(b)
	}
	p.packet(eof)
}
