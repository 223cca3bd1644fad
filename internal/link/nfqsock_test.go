package link

import (
	"encoding/binary"
	"testing"
	"time"
)

// packetMsg builds an NFQNL_MSG_PACKET's body (after the netlink header) the way
// nfnetlink_queue lays it out: nfgenmsg, then attributes in network byte order.
func packetMsg(id uint32, stamp time.Time, length uint32) []byte {
	b := []byte{2, 0, 0, 100} // AF_INET, NFNETLINK_V0, queue 100
	hdr := make([]byte, 7)
	binary.BigEndian.PutUint32(hdr, id)
	binary.BigEndian.PutUint16(hdr[4:], 0x0800)
	b = appendAttr(b, nfqaPacketHdr, hdr)
	if !stamp.IsZero() {
		ts := make([]byte, 16)
		binary.BigEndian.PutUint64(ts, uint64(stamp.Unix()))
		binary.BigEndian.PutUint64(ts[8:], uint64(stamp.Nanosecond()/1000))
		b = appendAttr(b, nfqaTimestamp|0x8000, ts) // a set NLA_F_NESTED bit must not hide it
	}
	l := make([]byte, 4)
	binary.BigEndian.PutUint32(l, length)
	return appendAttr(b, 13, l) // NFQA_CAP_LEN: present in real messages, not read
}

func TestParsePacket(t *testing.T) {
	at := time.Unix(1_700_000_000, 123_456_000)
	p, ok := parsePacket(packetMsg(77, at, 1514))
	if !ok || p.ID != 77 || p.Stamp != at.UnixNano() {
		t.Fatalf("parsePacket = %+v, %v; want id 77, stamp %d", p, ok, at.UnixNano())
	}
	p, ok = parsePacket(packetMsg(5, time.Time{}, 60))
	if !ok || p.ID != 5 || p.Stamp != 0 {
		t.Fatalf("without a timestamp: %+v, %v; want id 5, stamp 0", p, ok)
	}
	if _, ok := parsePacket([]byte{2, 0, 0, 100}); ok {
		t.Error("a message without NFQA_PACKET_HDR parsed as a packet")
	}
	bad := packetMsg(9, at, 60)
	binary.NativeEndian.PutUint16(bad[4:6], 200) // first attribute's length past the end
	if _, ok := parsePacket(bad); ok {
		t.Error("a truncated attribute parsed as a packet")
	}
}

// The verdict the delay line writes is the message libnetfilter_queue's
// nfq_nlmsg_verdict_put builds: a netlink header, nfgenmsg with the queue number in network
// order, and NFQA_VERDICT_HDR {verdict, id} in network order.
func TestVerdictMessageLayout(t *testing.T) {
	s := &nfqSock{queue: 101, seq: 41}
	msg := appendAttr(nfqHeader(s.out[:0], nfqnlMsgVerdictBat, 1, 42, s.queue), nfqaVerdictHdr,
		binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, nfAccept), 0x01020304))
	binary.NativeEndian.PutUint32(msg[0:4], uint32(len(msg)))
	if len(msg) != 32 {
		t.Fatalf("verdict message %d bytes, want 32", len(msg))
	}
	if typ := binary.NativeEndian.Uint16(msg[4:6]); typ != 3<<8|3 {
		t.Errorf("type %#x, want NFNL_SUBSYS_QUEUE<<8 | NFQNL_MSG_VERDICT_BATCH", typ)
	}
	if q := binary.BigEndian.Uint16(msg[18:20]); q != 101 {
		t.Errorf("queue %d, want 101", q)
	}
	if l, a := binary.NativeEndian.Uint16(msg[20:22]), binary.NativeEndian.Uint16(msg[22:24]); l != 12 || a != nfqaVerdictHdr {
		t.Errorf("attribute len %d type %d, want 12, NFQA_VERDICT_HDR", l, a)
	}
	if v, id := binary.BigEndian.Uint32(msg[24:28]), binary.BigEndian.Uint32(msg[28:32]); v != nfAccept || id != 0x01020304 {
		t.Errorf("verdict %d id %#x, want accept, 0x01020304", v, id)
	}
}
