package link

import (
	"encoding/binary"
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// nfqSock is one NFQUEUE queue bound on a raw netlink socket, with the messages hand-built
// and hand-parsed. The delay line's hot path is: one recvmmsg for up to recvBatch packet
// messages, parsed in place, and one batch verdict ("accept every id up to N") per release.
// Nothing on that path allocates, and no goroutine hands a packet to another. The hot-path
// calls never block (MSG_DONTWAIT; a verdict is processed in the caller's context), so they
// are raw system calls: the Go scheduler is not told, and its monitor thread does not wake
// every 20 µs to take the loop's P away.
type nfqSock struct {
	fd    int
	queue uint16
	seq   uint32

	bufs [][]byte             // one receive buffer per message slot
	iovs []unix.Iovec         // one per slot, pointing into bufs
	msgs []mmsghdr            // recvmmsg's vector
	out  [64]byte             // verdict message, rebuilt in place per verdict
	ackb []byte               // config acknowledgements
	pkts [recvBatch]nfqPacket // recv's result, reused
}

// nfqPacket is what the delay line needs of one queued packet.
type nfqPacket struct {
	ID    uint32
	Stamp int64 // kernel arrival time, ns since the Unix epoch (CLOCK_REALTIME); 0 = none
}

// Netlink and nfnetlink_queue constants (linux/netfilter/nfnetlink_queue.h).
const (
	nfnlSubsysQueue     = 3
	nfqnlMsgPacket      = 0
	nfqnlMsgVerdict     = 1
	nfqnlMsgConfig      = 2
	nfqnlMsgVerdictBat  = 3
	nfqaPacketHdr       = 1
	nfqaVerdictHdr      = 2
	nfqaTimestamp       = 4
	nfqaCfgCmd          = 1
	nfqaCfgParams       = 2
	nfqaCfgQueueMaxlen  = 3
	nfqaCfgMask         = 4
	nfqaCfgFlags        = 5
	nfqnlCfgCmdBind     = 1
	nfqnlCopyMeta       = 1
	nfqaCfgFGSO         = 4
	nfDrop              = 0
	nfAccept            = 1
	nlaTypeMask         = 0x3fff
	nlmsgHdrLen         = 16
	nfgenHdrLen         = 4
	recvBatch           = 64  // packet messages per recvmmsg
	recvBufLen          = 512 // a metadata-only packet message is ~100-200 bytes
	nfqSocketBufferSize = 32 << 20
)

// mmsghdr is struct mmsghdr of <sys/socket.h>.
type mmsghdr struct {
	Hdr unix.Msghdr
	Len uint32
	_   [4]byte
}

// openNfq opens a netlink socket and binds it to queue q: metadata copies only (the delay
// line needs ids, not payloads), GSO super-packets queued whole (one message and one verdict
// instead of up to 45), maxLen packets at most in the kernel queue. No fail-open flag: a full
// kernel queue drops and counts (queue_dropped) rather than passing packets undelayed.
func openNfq(q uint16, maxLen uint32) (*nfqSock, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_NETFILTER)
	if err != nil {
		return nil, fmt.Errorf("netlink socket: %w", err)
	}
	s := &nfqSock{fd: fd, queue: q, ackb: make([]byte, 8192)}
	if err := s.init(maxLen); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return s, nil
}

func (s *nfqSock) init(maxLen uint32) error {
	if err := unix.Bind(s.fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return fmt.Errorf("bind netlink socket: %w", err)
	}
	// Messages go to the kernel (port 0); connecting lets a verdict be a plain write(2).
	if err := unix.Connect(s.fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return fmt.Errorf("connect netlink socket: %w", err)
	}
	// A burst must not overflow the receive buffer; past rmem_max needs root (we are).
	if unix.SetsockoptInt(s.fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, nfqSocketBufferSize) != nil {
		_ = unix.SetsockoptInt(s.fd, unix.SOL_SOCKET, unix.SO_RCVBUF, nfqSocketBufferSize)
	}
	// Asking for receive timestamps on any socket turns on the kernel's packet timestamps
	// (net_enable_timestamp); nfnetlink_queue then stamps each queued packet with its arrival
	// at the hook (NFQA_TIMESTAMP), which times the delay from when the packet arrived, not
	// from when this thread woke up to read it. A kernel that does not stamp is detected per
	// packet (see loop.admit).
	_ = unix.SetsockoptInt(s.fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
	// ENOBUFS on overflow is counted by the kernel (user_dropped); the reader need not see it.
	_ = unix.SetsockoptInt(s.fd, unix.SOL_NETLINK, unix.NETLINK_NO_ENOBUFS, 1)
	cmd := []byte{nfqnlCfgCmdBind, 0, 0, unix.AF_INET}
	params := make([]byte, 5)
	params[4] = nfqnlCopyMeta
	var maxb, flags, mask [4]byte
	binary.BigEndian.PutUint32(maxb[:], maxLen)
	binary.BigEndian.PutUint32(flags[:], nfqaCfgFGSO)
	binary.BigEndian.PutUint32(mask[:], nfqaCfgFGSO)
	steps := []struct {
		what  string
		attrs []nlAttr
	}{
		{"bind", []nlAttr{{nfqaCfgCmd, cmd}}},
		{"copy mode", []nlAttr{{nfqaCfgParams, params}}},
		{"queue length", []nlAttr{{nfqaCfgQueueMaxlen, maxb[:]}}},
		{"flags", []nlAttr{{nfqaCfgFlags, flags[:]}, {nfqaCfgMask, mask[:]}}},
	}
	for _, st := range steps {
		if err := s.config(st.attrs); err != nil {
			return fmt.Errorf("nfqueue %d %s: %w", s.queue, st.what, err)
		}
	}
	s.bufs = make([][]byte, recvBatch)
	s.iovs = make([]unix.Iovec, recvBatch)
	s.msgs = make([]mmsghdr, recvBatch)
	for i := range s.bufs {
		s.bufs[i] = make([]byte, recvBufLen)
		s.iovs[i].Base = &s.bufs[i][0]
		s.iovs[i].SetLen(recvBufLen)
		s.msgs[i].Hdr.Iov = &s.iovs[i]
		s.msgs[i].Hdr.SetIovlen(1)
	}
	return nil
}

type nlAttr struct {
	typ  uint16
	data []byte
}

// config sends one NFQNL_MSG_CONFIG with an acknowledgement asked for, and waits for it.
func (s *nfqSock) config(attrs []nlAttr) error {
	s.seq++
	msg := nfqHeader(make([]byte, 0, 64), nfqnlMsgConfig, unix.NLM_F_REQUEST|unix.NLM_F_ACK, s.seq, s.queue)
	for _, a := range attrs {
		msg = appendAttr(msg, a.typ, a.data)
	}
	binary.NativeEndian.PutUint32(msg[0:4], uint32(len(msg)))
	if _, err := unix.Write(s.fd, msg); err != nil {
		return err
	}
	for {
		n, err := unix.Read(s.fd, s.ackb)
		if err != nil {
			return err
		}
		for b := s.ackb[:n]; len(b) >= nlmsgHdrLen; {
			l := int(binary.NativeEndian.Uint32(b[0:4]))
			if l < nlmsgHdrLen || l > len(b) {
				return errors.New("short netlink message")
			}
			typ, seq := binary.NativeEndian.Uint16(b[4:6]), binary.NativeEndian.Uint32(b[8:12])
			if typ == unix.NLMSG_ERROR && seq == s.seq && l >= nlmsgHdrLen+4 {
				if e := int32(binary.NativeEndian.Uint32(b[16:20])); e != 0 {
					return unix.Errno(-e)
				}
				return nil
			}
			b = b[nlmsgAlign(l):]
		}
	}
}

// nfqHeader appends a netlink header (length patched by the caller) and an nfgenmsg.
func nfqHeader(b []byte, msgType uint16, flags uint16, seq uint32, queue uint16) []byte {
	var h [nlmsgHdrLen + nfgenHdrLen]byte
	binary.NativeEndian.PutUint16(h[4:6], nfnlSubsysQueue<<8|msgType)
	binary.NativeEndian.PutUint16(h[6:8], flags)
	binary.NativeEndian.PutUint32(h[8:12], seq)
	h[16] = unix.AF_UNSPEC
	h[17] = 0 // NFNETLINK_V0
	binary.BigEndian.PutUint16(h[18:20], queue)
	return append(b, h[:]...)
}

func appendAttr(b []byte, typ uint16, data []byte) []byte {
	var h [4]byte
	binary.NativeEndian.PutUint16(h[0:2], uint16(4+len(data)))
	binary.NativeEndian.PutUint16(h[2:4], typ)
	b = append(b, h[:]...)
	b = append(b, data...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

func nlmsgAlign(n int) int { return (n + 3) &^ 3 }

// recv reads up to recvBatch queued packets without blocking and returns them (a slice of
// the socket's own array, valid until the next recv). errno EAGAIN means none was waiting;
// error acknowledgements of earlier verdicts are counted in verdictErrs.
func (s *nfqSock) recv() (pkts []nfqPacket, verdictErrs int, err error) {
	for i := range s.msgs {
		s.msgs[i].Len = 0
	}
	n, _, e := unix.RawSyscall6(unix.SYS_RECVMMSG, uintptr(s.fd), uintptr(unsafe.Pointer(&s.msgs[0])),
		uintptr(len(s.msgs)), unix.MSG_DONTWAIT, 0, 0)
	if e != 0 {
		return nil, 0, e
	}
	out := s.pkts[:0]
	for i := 0; i < int(n); i++ {
		b := s.bufs[i][:s.msgs[i].Len]
		for len(b) >= nlmsgHdrLen {
			l := int(binary.NativeEndian.Uint32(b[0:4]))
			if l < nlmsgHdrLen || l > len(b) {
				break
			}
			typ := binary.NativeEndian.Uint16(b[4:6])
			switch {
			case typ == nfnlSubsysQueue<<8|nfqnlMsgPacket:
				if p, ok := parsePacket(b[nlmsgHdrLen:l]); ok {
					out = append(out, p)
				}
			case typ == unix.NLMSG_ERROR && l >= nlmsgHdrLen+4:
				if binary.NativeEndian.Uint32(b[16:20]) != 0 {
					verdictErrs++
				}
			}
			b = b[min(nlmsgAlign(l), len(b)):]
		}
	}
	return out, verdictErrs, nil
}

// parsePacket reads the id and the kernel's timestamp (when the packet carries one) of one
// NFQNL_MSG_PACKET's payload (after the netlink header).
func parsePacket(b []byte) (nfqPacket, bool) {
	var p nfqPacket
	if len(b) < nfgenHdrLen {
		return p, false
	}
	ok := false
	for a := b[nfgenHdrLen:]; len(a) >= 4; {
		l := int(binary.NativeEndian.Uint16(a[0:2]))
		if l < 4 || l > len(a) {
			break
		}
		v := a[4:l]
		switch binary.NativeEndian.Uint16(a[2:4]) & nlaTypeMask {
		case nfqaPacketHdr:
			if len(v) >= 4 {
				p.ID, ok = binary.BigEndian.Uint32(v[0:4]), true
			}
		case nfqaTimestamp:
			if len(v) >= 16 {
				sec, usec := binary.BigEndian.Uint64(v[0:8]), binary.BigEndian.Uint64(v[8:16])
				p.Stamp = int64(sec)*1e9 + int64(usec)*1e3
			}
		}
		a = a[min(nlmsgAlign(l), len(a)):]
	}
	return p, ok
}

// verdict sends one verdict for packet id (batch: for every queued packet with an id up to
// id, the kernel's NFQNL_MSG_VERDICT_BATCH). No acknowledgement is asked for: the kernel
// only answers an error, which recv counts.
func (s *nfqSock) verdict(id uint32, v uint32, batch bool) error {
	typ := uint16(nfqnlMsgVerdict)
	if batch {
		typ = nfqnlMsgVerdictBat
	}
	s.seq++
	var vh [8]byte
	binary.BigEndian.PutUint32(vh[0:4], v)
	binary.BigEndian.PutUint32(vh[4:8], id)
	msg := appendAttr(nfqHeader(s.out[:0], typ, unix.NLM_F_REQUEST, s.seq, s.queue), nfqaVerdictHdr, vh[:])
	binary.NativeEndian.PutUint32(msg[0:4], uint32(len(msg)))
	if _, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(s.fd), uintptr(unsafe.Pointer(&msg[0])), uintptr(len(msg))); e != 0 {
		return e
	}
	return nil
}

func (s *nfqSock) close() error { return unix.Close(s.fd) }
