package tunnel

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"net"
	"testing"
	"time"
)

// mysqlPacket appends a protocol packet: length, sequence id, payload.
func mysqlPacket(dst []byte, seq byte, payload []byte) []byte {
	n := len(payload)
	dst = append(dst, byte(n), byte(n>>8), byte(n>>16), seq)
	return append(dst, payload...)
}

// binlogEvent is an event with its common header, body and CRC32 (its log position
// already filled in by the caller's pos).
func binlogEvent(typ byte, pos uint32, body []byte) []byte {
	size := binlogEventHeader + len(body) + 4
	ev := make([]byte, binlogEventHeader, size)
	binary.LittleEndian.PutUint32(ev[0:4], 1764200000)
	ev[4] = typ
	binary.LittleEndian.PutUint32(ev[5:9], 1)
	binary.LittleEndian.PutUint32(ev[9:13], uint32(size))
	binary.LittleEndian.PutUint32(ev[13:17], pos)
	ev = append(ev, body...)
	return binary.LittleEndian.AppendUint32(ev, crc32.ChecksumIEEE(ev))
}

// dumpReply is what a server sends after COM_BINLOG_DUMP: n event packets (a rotate with
// log position 0 first, row events of sysbench-like digits, a heartbeat whose position does
// not advance, one event with a broken CRC) and an EOF packet. It returns the bytes and how
// many packets carry a valid event.
func dumpReply(r *rand.Rand, n int) ([]byte, int) {
	var out []byte
	seq := byte(1)
	pos := uint32(4)
	valid := 0
	add := func(ev []byte) {
		out = mysqlPacket(out, seq, append([]byte{0}, ev...))
		seq++
	}
	add(binlogEvent(4, 0, []byte("\x04\x00\x00\x00\x00\x00\x00\x00mysql-bin.000002")))
	valid++
	for i := range n {
		body := digitGroups(r, 1+r.IntN(40))
		ev := binlogEvent(30, 0, body)
		pos += uint32(len(ev))
		ev = binlogEvent(30, pos, body)
		switch {
		case i%97 == 50: // a heartbeat: its position is the current one, not advanced
			ev = binlogEvent(27, pos, []byte("mysql-bin.000002"))
			valid++
		case i%89 == 40: // a corrupt CRC: sent as it came
			ev[len(ev)-1] ^= 0xff
		default:
			valid++
		}
		add(ev)
	}
	out = mysqlPacket(out, seq, []byte{0xfe, 0, 0, 2, 0})
	return out, valid
}

// recodeAndRestore runs stream through an encoder (armed as given) in reads of random
// sizes, cuts each piece into records of random sizes as the scheduler may, and restores
// them as the other end would. It returns the restored bytes and the packets recoded.
func recodeAndRestore(t *testing.T, r *rand.Rand, stream []byte, armed bool) ([]byte, int64) {
	t.Helper()
	armAt := 0
	if !armed {
		armAt = -1
	}
	return binlogPass(t, stream, armAt, func() int { return 1 + r.IntN(6000) }, func() int { return 1 + r.IntN(3000) })
}

// binlogPass runs stream through an encoder, armed from the read numbered armAt (-1:
// never), in reads of read() bytes (at most readSize), checks that the pieces of each read
// cover it in order, cuts each piece into records of rec() bytes and restores them as the
// other end would. It returns the restored bytes and the packets recoded, after checking
// that every recoded packet was restored.
func binlogPass(t *testing.T, stream []byte, armAt int, read, rec func() int) ([]byte, int64) {
	t.Helper()
	e := &binlogEncoder{}
	var d binlogDecoder
	var got []byte
	var segs []segment
	restored := 0
	for i, p := 0, stream; len(p) > 0; i++ {
		if i == armAt {
			e.armed.Store(true)
		}
		b := bytes.Clone(p[:min(len(p), read(), readSize)])
		p = p[len(b):]
		segs = e.recode(b, segs)
		at := 0
		for _, s := range segs {
			if s.start != at || s.end <= s.start {
				t.Fatalf("pieces %+v do not cover a read of %d bytes in order", segs, len(b))
			}
			at = s.end
			for q := b[s.start:s.end]; len(q) > 0; {
				r := q[:min(len(q), rec())]
				q = q[len(r):]
				if s.kind == recData {
					if d.pending() {
						t.Fatal("a data record while a binlog packet is cut")
					}
					got = append(got, r...)
					continue
				}
				out, err := d.decode(bytes.Clone(r))
				if err != nil {
					t.Fatalf("restore a recoded piece: %v", err)
				}
				got = append(got, out...)
				restored += d.restored
				d.restored = 0
			}
		}
		if at != len(b) {
			t.Fatalf("pieces %+v cover %d of a read of %d bytes", segs, at, len(b))
		}
	}
	if d.pending() {
		t.Fatal("the stream ended inside a binlog packet")
	}
	if int64(restored) != e.events {
		t.Fatalf("restored %d packets, recoded %d", restored, e.events)
	}
	return got, e.events
}

// TestBinlogRecodeRestores: an armed encoder recodes most event packets of a dump (not the
// ones a read cut, nor the one with a broken CRC), the decoder puts back exactly the
// server's bytes, and the recoded packets' length and CRC went as zeros; unarmed, nothing
// is recoded.
func TestBinlogRecodeRestores(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	stream, valid := dumpReply(r, 2000)
	for range 3 {
		got, recoded := recodeAndRestore(t, r, stream, true)
		if !bytes.Equal(got, stream) {
			t.Fatalf("restored %d bytes differ from the %d sent", len(got), len(stream))
		}
		if recoded < int64(valid)*8/10 || recoded > int64(valid) {
			t.Fatalf("recoded %d of %d valid event packets", recoded, valid)
		}
	}
	got, recoded := recodeAndRestore(t, r, stream, false)
	if recoded != 0 || !bytes.Equal(got, stream) {
		t.Fatalf("unarmed: recoded %d, bytes equal %v", recoded, bytes.Equal(got, stream))
	}

	// One read holding the whole dump: every valid packet is recoded, and what zstd sees
	// has zeros where the length and CRC were.
	e := &binlogEncoder{}
	e.armed.Store(true)
	read := append([]byte(nil), stream...)
	segs := e.recode(read, nil)
	if e.events != int64(valid) {
		t.Fatalf("one read: recoded %d of %d valid event packets", e.events, valid)
	}
	s := segs[0]
	if s.kind != recBinlog || s.start != 0 {
		t.Fatalf("first piece %+v, want the rotate event recoded", s)
	}
	pkt := read[:4+packetLen(stream)]
	if !bytes.Equal(pkt[:3], []byte{0, 0, 0}) || !bytes.Equal(pkt[len(pkt)-4:], []byte{0, 0, 0, 0}) {
		t.Fatalf("recoded packet keeps its length % x or CRC % x", pkt[:3], pkt[len(pkt)-4:])
	}
}

// TestBinlogDecodeRefusesNoise: a binlog record that is not a recoded event is corrupt.
func TestBinlogDecodeRefusesNoise(t *testing.T) {
	var d binlogDecoder
	noise := bytes.Repeat([]byte{0x41}, 64)
	if _, err := d.decode(noise); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("decode(noise) = %v, want ErrCorrupt", err)
	}
}

// TestBinlogDecodeCutPacketLinear: a packet arriving one byte per record is gathered by
// appending each byte, not by copying what came before into a new buffer per record (a
// peer could otherwise make the receiver copy a 32 KiB packet 32768 times).
func TestBinlogDecodeCutPacketLinear(t *testing.T) {
	body := bytes.Repeat([]byte{7}, readSize-binlogMinPacket)
	pkt := mysqlPacket(nil, 1, append([]byte{0}, binlogEvent(30, 4, body)...))
	if !(&binlogEncoder{}).recodePacket(pkt) {
		t.Fatal("test packet does not recode")
	}
	allocs := testing.AllocsPerRun(1, func() {
		var d binlogDecoder
		for i := range pkt {
			out, err := d.decode(pkt[i : i+1 : i+1])
			if err != nil || (len(out) > 0) != (i == len(pkt)-1) {
				t.Fatalf("byte %d of %d: %d bytes out, %v", i, len(pkt), len(out), err)
			}
		}
	})
	if allocs > 64 {
		t.Fatalf("%.0f allocations to gather a %d-byte packet from one-byte records", allocs, len(pkt))
	}
}

// TestDumpWatch: the watch finds COM_BINLOG_DUMP (and its GTID form) at a command's start,
// however the bytes are cut, and not the same byte as a handshake packet's first (sequence
// id 1) or inside a query.
func TestDumpWatch(t *testing.T) {
	var c2s []byte
	c2s = mysqlPacket(c2s, 1, append([]byte{comBinlogDump}, bytes.Repeat([]byte{7}, 40)...))
	c2s = mysqlPacket(c2s, 0, append([]byte{0x03}, "SELECT '\x12\x00\x00\x00\x12'"...))
	c2s = mysqlPacket(c2s, 0, nil)
	before := len(c2s)
	for _, cmd := range []byte{comBinlogDump, comBinlogDumpGTID} {
		stream := mysqlPacket(append([]byte(nil), c2s...), 0, []byte{cmd, 4, 0, 0, 0, 0, 0, 1, 0, 0, 0})
		for _, step := range []int{1, 2, 3, 5, 7, len(stream)} {
			var w dumpWatch
			at := -1
			for i := 0; i < len(stream) && at < 0; i += step {
				if w.feed(stream[i:min(len(stream), i+step)]) {
					at = i
				}
			}
			if at < 0 || at+step <= before || at > before+4 {
				t.Fatalf("command %#x, reads of %d: found at %d, want the packet at %d", cmd, step, at, before)
			}
		}
		var w dumpWatch
		if w.feed(c2s) {
			t.Fatalf("command %#x: found in the bytes before it", cmd)
		}
	}
}

// dialSend connects to addr (closed when the test ends, 20 s to finish its exchange) and
// sends p, as a replica sends its commands.
func dialSend(t *testing.T, addr string, p []byte) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := c.Write(p); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestMuxBinlogRecode: through a mux link, a client that asks for a binlog dump receives
// the server's bytes exactly, the exit recodes the packets and the entry restores as many;
// with --binlog raw, or on a stream that never asked for a dump, nothing is recoded.
func TestMuxBinlogRecode(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	reply, valid := dumpReply(r, 3000)
	var dump []byte
	dump = mysqlPacket(dump, 0, append([]byte{0x03}, "SET @master_binlog_checksum='CRC32'"...))
	dump = mysqlPacket(dump, 0, []byte{comBinlogDump, 4, 0, 0, 0, 0, 0, 1, 0, 0, 0})
	query := mysqlPacket(nil, 0, append([]byte{0x03}, "SELECT 1"...))
	// The server reads the client's commands up to a dump or a query, then replies.
	server := serveTCP(t, func(c net.Conn) {
		for {
			h := make([]byte, 4)
			if _, err := io.ReadFull(c, h); err != nil {
				return
			}
			p := make([]byte, packetLen(h))
			if _, err := io.ReadFull(c, p); err != nil {
				return
			}
			if p[0] == comBinlogDump || string(p) == string(query[4:]) {
				break
			}
		}
		c.Write(reply)
		c.(*net.TCPConn).CloseWrite()
		io.Copy(io.Discard, c)
	})
	for _, tc := range []struct {
		name   string
		mode   BinlogMode
		ask    []byte
		recode bool
	}{
		{"dump", BinlogRecode, dump, true},
		{"dump, --binlog raw", BinlogRaw, dump, false},
		{"no dump", "", query, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			exit := startTunnel(t, Config{Role: Exit, To: server, Mux: MuxOn, Binlog: tc.mode})
			entry := startTunnel(t, Config{Role: Entry, To: exit.Addr().String(), Mux: MuxOn})
			c := dialSend(t, entry.Addr().String(), tc.ask)
			got, err := io.ReadAll(c)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, reply) {
				t.Fatalf("client received %d bytes, not the server's %d", len(got), len(reply))
			}
			sent, restored := exit.Stats().Mux.BinlogSent, entry.Stats().Mux.BinlogRestored
			if sent != restored {
				t.Fatalf("exit recoded %d packets, entry restored %d", sent, restored)
			}
			if tc.recode && (sent < int64(valid)/2 || sent > int64(valid)) || !tc.recode && sent != 0 {
				t.Fatalf("recoded %d of %d valid event packets (recode expected: %v)", sent, valid, tc.recode)
			}
		})
	}
}

// TestMuxBinlogCutPacketNotHeld: after a dump starts, the first half of an event packet
// reaches the client before the server sends the rest (which it does only once the client
// answers): the exit never holds bytes back for the rest of a packet.
func TestMuxBinlogCutPacketNotHeld(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	reply, _ := dumpReply(r, 20)
	half := len(reply) / 2
	server := serveTCP(t, func(c net.Conn) {
		h := make([]byte, 4)
		if _, err := io.ReadFull(c, h); err != nil {
			return
		}
		if _, err := io.ReadFull(c, make([]byte, packetLen(h))); err != nil {
			return
		}
		c.Write(reply[:half])
		if _, err := io.ReadFull(c, make([]byte, 1)); err != nil {
			return
		}
		c.Write(reply[half:])
		c.(*net.TCPConn).CloseWrite()
		io.Copy(io.Discard, c)
	})
	exit := startTunnel(t, Config{Role: Exit, To: server, Mux: MuxOn})
	entry := startTunnel(t, Config{Role: Entry, To: exit.Addr().String(), Mux: MuxOn})
	c := dialSend(t, entry.Addr().String(), mysqlPacket(nil, 0, []byte{comBinlogDump, 4, 0, 0, 0, 0, 0, 1, 0, 0, 0}))
	first := make([]byte, half)
	if _, err := io.ReadFull(c, first); err != nil {
		t.Fatalf("the first %d bytes (ending inside a packet) did not arrive: %v", half, err)
	}
	if _, err := c.Write([]byte{1}); err != nil {
		t.Fatal(err)
	}
	rest, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	if got := append(first, rest...); !bytes.Equal(got, reply) {
		t.Fatalf("client received %d bytes, not the server's %d", len(got), len(reply))
	}
	if exit.Stats().Mux.BinlogSent == 0 {
		t.Fatal("nothing recoded: the test did not exercise the recoder")
	}
}

// BenchmarkBinlogRecode is the exit's cost per read of the server: a stream that never
// asked for a dump (32 KiB of 200-byte result rows: only packet boundaries followed) and a
// binlog dump (32 KiB of event packets: each checked, CRC32 included, and recoded).
func BenchmarkBinlogRecode(b *testing.B) {
	r := rand.New(rand.NewPCG(13, 14))
	var rows []byte
	for len(rows) < readSize-204 {
		rows = mysqlPacket(rows, byte(len(rows)), digitGroups(r, 17)[:200])
	}
	dump, _ := dumpReply(r, 400)
	dump = dump[:readSize]
	for _, c := range []struct {
		name  string
		data  []byte
		armed bool
	}{{"rows-unarmed", rows, false}, {"dump-armed", dump, true}} {
		b.Run(c.name, func(b *testing.B) {
			e := &binlogEncoder{}
			e.armed.Store(c.armed)
			buf := make([]byte, len(c.data))
			var segs []segment
			b.SetBytes(int64(len(c.data)))
			for b.Loop() {
				copy(buf, c.data)
				e.scan = packetScan{}
				segs = e.recode(buf, segs)
			}
		})
	}
}
