package tunnel

import (
	"encoding/binary"
	"fmt"
)

// On a mux link a frame's raw bytes are a sequence of records, each tagged with the id of
// the client connection (stream) it belongs to:
//
//	kind(1) | stream id(4) | n(4) | payload (n bytes for data, binlog and reset records)
//
// The records of many streams share one frame, so they share its CRC and one zstd stream:
// a row another connection read a second ago is sent as a reference.
const recHeaderLen = 9

type recKind byte

const (
	recOpen   recKind = 1 // entry → exit: a client connected; dial the server. n = 0
	recData   recKind = 2 // n payload bytes of the stream
	recFin    recKind = 3 // the sender's local peer reached EOF (half-close). n = 0
	recReset  recKind = 4 // the stream failed at the sender; payload: why (text)
	recCredit recKind = 5 // the receiver wrote n more bytes to its local peer: send n more
	recBinlog recKind = 6 // n payload bytes of the stream: binlog event packets, recoded (binlog.go)
)

func (k recKind) String() string {
	switch k {
	case recOpen:
		return "open"
	case recData:
		return "data"
	case recFin:
		return "fin"
	case recReset:
		return "reset"
	case recCredit:
		return "credit"
	case recBinlog:
		return "binlog"
	}
	return fmt.Sprintf("kind %d", byte(k))
}

// appendRecord appends a record header; data, binlog and reset records' payload follows it.
func appendRecord(dst []byte, k recKind, id uint32, n int) []byte {
	dst = append(dst, byte(k))
	dst = binary.BigEndian.AppendUint32(dst, id)
	return binary.BigEndian.AppendUint32(dst, uint32(n))
}

// record is one parsed record; payload aliases the frame's bytes.
type record struct {
	kind    recKind
	id      uint32
	n       uint32
	payload []byte
}

// nextRecord parses the record at the start of p and returns the rest. A frame that passed
// its CRC but does not parse was built wrong: ErrCorrupt all the same.
func nextRecord(p []byte) (record, []byte, error) {
	if len(p) < recHeaderLen {
		return record{}, nil, fmt.Errorf("%w: %d bytes left, short of a record header", ErrCorrupt, len(p))
	}
	r := record{kind: recKind(p[0]), id: binary.BigEndian.Uint32(p[1:5]), n: binary.BigEndian.Uint32(p[5:9])}
	p = p[recHeaderLen:]
	switch r.kind {
	case recData, recBinlog, recReset:
		if int64(r.n) > int64(len(p)) || (r.kind != recReset && r.n == 0) {
			return record{}, nil, fmt.Errorf("%w: %s record of stream %d says %d bytes, frame has %d", ErrCorrupt, r.kind, r.id, r.n, len(p))
		}
		r.payload, p = p[:r.n], p[r.n:]
	case recOpen, recFin:
		if r.n != 0 {
			return record{}, nil, fmt.Errorf("%w: %s record of stream %d with n=%d", ErrCorrupt, r.kind, r.id, r.n)
		}
	case recCredit:
	default:
		return record{}, nil, fmt.Errorf("%w: unknown record kind %d", ErrCorrupt, r.kind)
	}
	return r, p, nil
}
