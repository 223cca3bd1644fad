package tunnel

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"sync/atomic"
)

// A MySQL or MariaDB server sends a replica its binlog as one protocol packet per event:
//
//	length(3) | seq(1) | 0x00 | event: timestamp(4) type(1) server_id(4) size(4) log_pos(4) flags(2) body | crc32(4)
//
// The receiving end can work out four of those fields: the packet length (the event's size
// plus one), the sequence id (usually the last one plus one), the log position (usually the
// last event's plus this one's size) and the CRC32 (over the event). They change with every
// event, so zstd sends each as literals (the CRC as four random bytes) and its matches break
// on them; on the replication study's stream they cost about a third of the compressed
// bytes (BenchmarkCaptureWindow, the "recode" rows).
//
// So at the exit, once the client of a stream asked for a binlog dump (COM_BINLOG_DUMP or
// COM_BINLOG_DUMP_GTID, seen in the bytes it sent: dumpWatch), each whole event packet in a
// read of the server is checked: first byte 0x00, length = event size + 1, CRC32 matching.
// A packet that checks is sent in a binlog record, as long as it was: its length and CRC
// zeroed, its sequence id XORed with the expected one (0 when it is the last recoded one's
// plus one), and its log position zeroed when it follows from the last recoded event's (a
// flag in the 0x00 byte's place says so); the other end puts them back (binlogDecoder). Everything else is sent as it came in data
// records: a packet that does not check, one cut by the end of a read, every stream that is
// not a binlog dump. The replica therefore receives the server's bytes bit for bit, and no
// byte waits for the rest of its packet.

const (
	// binlogEventHeader is an event's common header: timestamp, type, server id, size,
	// log position, flags.
	binlogEventHeader = 19
	// binlogMinPacket is the shortest packet recoded: header, 0x00, event header, CRC.
	binlogMinPacket = 4 + 1 + binlogEventHeader + 4
	// binlogPosDerived, in a recoded packet's fifth byte: the log position was zeroed and
	// is the last recoded event's plus this one's size.
	binlogPosDerived = 1
	// comBinlogDump and comBinlogDumpGTID are the commands that start a binlog dump.
	comBinlogDump     = 0x12
	comBinlogDumpGTID = 0x1e
)

// errBinlogEvent marks a binlog record that does not restore to whole events: it ends
// its stream (mux.go's badEvent).
var errBinlogEvent = fmt.Errorf("%w: binlog record", ErrCorrupt)

// packetLen is the payload length in a MySQL packet header.
func packetLen(h []byte) int { return int(h[0]) | int(h[1])<<8 | int(h[2])<<16 }

// packetScan follows MySQL packet boundaries through a byte stream read in pieces: a
// header cut by a piece's end is kept until its last byte arrives; a payload is skipped.
type packetScan struct {
	hdr  [4]byte // a packet header cut by a piece's end
	hdrN int
	left int // payload bytes of the current packet still to come
}

// binlogEncoder recodes a stream's server→client bytes at the exit. armed is set by the
// WAN reader when the client asks for a binlog dump; the rest belongs to the goroutine or
// relay thread that reads the server.
type binlogEncoder struct {
	armed   atomic.Bool
	scan    packetScan
	lastSeq byte
	lastPos uint32
	events  int64 // events recoded (for the stats)
	passed  int64 // packets of the dump sent as they came: not an event that checks, or cut
}

// segment is a piece of a read: sent as kind (recData or recBinlog).
type segment struct {
	kind       recKind
	start, end int
}

// recode rewrites the whole packets of p that check in place and returns p's pieces in
// order, each to be sent as data or binlog. Without arming nothing changes: one data piece.
func (e *binlogEncoder) recode(p []byte, segs []segment) []segment {
	segs = segs[:0]
	add := func(k recKind, start, end int) {
		if end == start {
			return
		}
		if n := len(segs); n > 0 && segs[n-1].kind == k && segs[n-1].end == start {
			segs[n-1].end = end
			return
		}
		segs = append(segs, segment{k, start, end})
	}
	armed := e.armed.Load()
	s := &e.scan
	i := 0
	for i < len(p) {
		if s.left > 0 || s.hdrN > 0 || !armed {
			j := i + s.skip(p[i:])
			add(recData, i, j)
			i = j
			continue
		}
		// At a packet's first byte: recode it when it is all here and checks.
		if len(p)-i >= 4 {
			if n := packetLen(p[i:]); i+4+n <= len(p) && e.recodePacket(p[i:i+4+n]) {
				add(recBinlog, i, i+4+n)
				i += 4 + n
				continue
			}
		}
		e.passed++
		j := i + s.skip(p[i:])
		add(recData, i, j)
		i = j
	}
	return segs
}

// skip consumes p up to the end of the current packet (all of p when it ends first) and
// returns how many bytes it took.
func (s *packetScan) skip(p []byte) int {
	i := 0
	for i < len(p) {
		if s.left > 0 {
			k := min(s.left, len(p)-i)
			s.left -= k
			i += k
			if s.left == 0 {
				return i
			}
			continue
		}
		k := min(4-s.hdrN, len(p)-i)
		copy(s.hdr[s.hdrN:], p[i:i+k])
		s.hdrN += k
		i += k
		if s.hdrN == 4 {
			s.left, s.hdrN = packetLen(s.hdr[:]), 0
			if s.left == 0 {
				return i
			}
		}
	}
	return i
}

// recodePacket checks one whole packet and, when it is a binlog event with a valid CRC32,
// zeroes what the decoder recomputes; it reports whether it did.
func (e *binlogEncoder) recodePacket(pkt []byte) bool {
	if len(pkt) < binlogMinPacket || len(pkt) > readSize || pkt[4] != 0 {
		return false
	}
	ev := pkt[5:]
	size := binary.LittleEndian.Uint32(ev[9:13])
	if int(size) != len(ev) || crc32.ChecksumIEEE(ev[:size-4]) != binary.LittleEndian.Uint32(ev[size-4:]) {
		return false
	}
	seq, pos := pkt[3], binary.LittleEndian.Uint32(ev[13:17])
	var flags byte
	if pos == e.lastPos+size {
		flags = binlogPosDerived
		clear(ev[13:17])
	}
	clear(pkt[:3])
	pkt[3] = seq ^ (e.lastSeq + 1)
	pkt[4] = flags
	clear(ev[size-4:])
	e.lastSeq, e.lastPos = seq, pos
	e.events++
	return true
}

// binlogDecoder restores the packets of a stream's binlog records at the receiving end.
// A record may end inside a packet (a frame took part of it); the rest is in the next.
type binlogDecoder struct {
	part     []byte // a packet cut by a record's end
	lastSeq  byte
	lastPos  uint32
	restored int // packets restored since the caller last read it (for the stats)
}

// decode restores the recoded packets in p (in place when no packet was cut before it)
// and returns the whole packets; a cut one waits in part. A packet that arrives in many
// records is appended to part once per record, never copied again: a peer sending one
// byte per record costs a copy of each byte, not of the whole packet so far each time.
func (d *binlogDecoder) decode(p []byte) ([]byte, error) {
	joined := len(d.part) > 0
	if joined {
		d.part = append(d.part, p...)
		p, d.part = d.part, nil
	}
	i := 0
	for len(p)-i >= 4+1+binlogEventHeader {
		pkt := p[i:]
		size := binary.LittleEndian.Uint32(pkt[5+9 : 5+13])
		n := 5 + int(size)
		if n < binlogMinPacket || n > readSize || pkt[0]|pkt[1]|pkt[2] != 0 || pkt[4]&^binlogPosDerived != 0 {
			return nil, fmt.Errorf("%w: not a recoded event (size %d, header % x)", errBinlogEvent, size, pkt[:5])
		}
		if len(pkt) < n {
			break
		}
		pkt = pkt[:n]
		ev := pkt[5:]
		seq := pkt[3] ^ (d.lastSeq + 1)
		l := size + 1
		pkt[0], pkt[1], pkt[2], pkt[3] = byte(l), byte(l>>8), byte(l>>16), seq
		if pkt[4]&binlogPosDerived != 0 {
			binary.LittleEndian.PutUint32(ev[13:17], d.lastPos+size)
		}
		pkt[4] = 0
		binary.LittleEndian.PutUint32(ev[size-4:], crc32.ChecksumIEEE(ev[:size-4]))
		d.lastSeq, d.lastPos = seq, binary.LittleEndian.Uint32(ev[13:17])
		d.restored++
		i += n
	}
	switch {
	case i == len(p):
	case i == 0 && joined:
		d.part = p // still the one cut packet; none of its buffer is handed out
	default:
		d.part = append(d.part[:0], p[i:]...)
	}
	return p[:i], nil
}

// pending reports whether a packet was cut and its rest has not come.
func (d *binlogDecoder) pending() bool { return len(d.part) > 0 }

// dumpWatch reads what a stream's client sends (at the exit) for a command that starts a
// binlog dump: a packet with sequence id 0 whose first byte is COM_BINLOG_DUMP or its GTID
// form. It follows packet boundaries from the stream's first byte; a client that is not
// MySQL (or talks TLS or the compressed protocol to its server) makes it read noise, which
// at worst arms the encoder on a stream where no packet will check.
type dumpWatch struct {
	hdr     [4]byte
	hdrN    int
	left    int  // payload bytes of the current packet still to come
	needCmd bool // the header is in; its first payload byte is next
}

// feed reads p and reports whether a dump command started in it.
func (w *dumpWatch) feed(p []byte) bool {
	for i := 0; i < len(p); {
		switch {
		case w.needCmd:
			w.needCmd = false
			cmd := p[i]
			i++
			w.left--
			if w.hdr[3] == 0 && (cmd == comBinlogDump || cmd == comBinlogDumpGTID) {
				return true
			}
		case w.left > 0:
			k := min(w.left, len(p)-i)
			w.left -= k
			i += k
		default:
			k := min(4-w.hdrN, len(p)-i)
			copy(w.hdr[w.hdrN:], p[i:i+k])
			w.hdrN += k
			i += k
			if w.hdrN == 4 {
				w.hdrN, w.left = 0, packetLen(w.hdr[:])
				w.needCmd = w.left > 0
			}
		}
	}
	return false
}
