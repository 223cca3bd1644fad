package tunnel

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
)

// muxRecordsPreface opens a mux link that, under TLS, leaves crypto/tls after the preface
// and seals its bytes in its own records (recordConn). Same length as preface.
const muxRecordsPreface = "WLMUX/2\n"

// A mux link under mutual TLS moves most of its bytes in small messages, and crypto/tls
// costs ~2 µs of CPU per record besides AES-GCM itself (its record layer's checks, locks,
// buffers and copies: half the relay's user time on an unshaped link). So once the
// handshake has authenticated both ends, the link seals its bytes in records of its own, as
// kernel TLS takes over after a user-space handshake:
//
//	kind(1) | ciphertext length(2) | AES-128-GCM ciphertext and tag
//
// The kind and length are the additional data; the nonce is a per-direction IV XOR the
// record's sequence number. Each direction's key and IV come from the TLS session's
// exporter (RFC 8446 §7.5, ExportKeyingMaterial) with the direction and a key epoch as
// context, so neither end ever seals two records under one nonce and the other direction's
// keys are unrelated. After rekeyEvery records a sender seals a rekey record and moves to
// the next epoch's keys (RFC 8446 §5.5 bounds AES-GCM to 2^24.5 full records per key). Any
// record that fails its tag ends the link (ErrCorrupt); a closed socket without the mux's
// end frame is an error too, so truncation is caught as it is under TLS.
const (
	recordHeaderLen = 3
	recordTagLen    = 16
	// maxRecordPlain is the most plaintext one record carries.
	maxRecordPlain = 1<<16 - 1 - recordTagLen
	recordData     = 0x17
	recordRekey    = 0x18
	recordKeyLen   = 16
	recordIVLen    = 12
	exporterLabel  = "EXPORTER-wirelab-mux-records"
	// defaultRekeyEvery: records per key before a rekey (2^24, under RFC 8446's margin).
	defaultRekeyEvery = 1 << 24
)

// recordKeys derives one direction's key material for an epoch.
type recordKeys func(entryToExit bool, epoch uint64) (cipher.AEAD, [recordIVLen]byte, error)

// exporterKeys derives record keys from a completed TLS session's exporter.
func exporterKeys(cs tls.ConnectionState) recordKeys {
	return func(entryToExit bool, epoch uint64) (cipher.AEAD, [recordIVLen]byte, error) {
		km, err := exportRecordKey(cs, entryToExit, epoch)
		if err != nil {
			return nil, [recordIVLen]byte{}, err
		}
		return recordCipher(km)
	}
}

// exportRecordKey is one direction's key and IV for an epoch (recordKeyLen+recordIVLen
// bytes), from the session's exporter with the direction and the epoch as context.
func exportRecordKey(cs tls.ConnectionState, entryToExit bool, epoch uint64) ([]byte, error) {
	ctx := make([]byte, 9)
	ctx[0] = 'x' // exit to entry
	if entryToExit {
		ctx[0] = 'e'
	}
	binary.BigEndian.PutUint64(ctx[1:], epoch)
	km, err := cs.ExportKeyingMaterial(exporterLabel, ctx, recordKeyLen+recordIVLen)
	if err != nil {
		return nil, fmt.Errorf("export record keys: %w", err)
	}
	return km, nil
}

// recordCipher is the AES-128-GCM cipher and IV of key material km (key, then IV).
func recordCipher(km []byte) (cipher.AEAD, [recordIVLen]byte, error) {
	var iv [recordIVLen]byte
	if len(km) != recordKeyLen+recordIVLen {
		return nil, iv, fmt.Errorf("record cipher: %d bytes of key material, want %d", len(km), recordKeyLen+recordIVLen)
	}
	block, err := aes.NewCipher(km[:recordKeyLen])
	if err != nil {
		return nil, iv, fmt.Errorf("record cipher: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, iv, fmt.Errorf("record cipher: %w", err)
	}
	copy(iv[:], km[recordKeyLen:])
	return aead, iv, nil
}

// recordDir is one direction's cipher state.
type recordDir struct {
	aead  cipher.AEAD
	iv    [recordIVLen]byte
	seq   uint64
	epoch uint64
	nbuf  [recordIVLen]byte // the current record's nonce, here so no record allocates one
}

// nonce returns the current record's nonce: the IV XOR the sequence number.
func (d *recordDir) nonce() []byte {
	d.nbuf = d.iv
	var s [8]byte
	binary.BigEndian.PutUint64(s[:], d.seq)
	for i := range s {
		d.nbuf[recordIVLen-8+i] ^= s[i]
	}
	return d.nbuf[:]
}

// recordConn is a mux link's WAN connection in its own records: Write seals, Read opens.
// One goroutine (or the relay loop) reads at a time; writes are serialised here. Close,
// addresses and deadlines are the socket's.
type recordConn struct {
	net.Conn // the socket
	keys     recordKeys
	entry    bool // this end is the entry: it seals entry-to-exit records

	wmu        sync.Mutex
	seal       recordDir
	hdr        [recordHeaderLen]byte // the record being sealed's header (its additional data)
	out        []byte
	rekeyEvery uint64

	open  recordDir
	raw   []byte // socket bytes; raw[rs:] not yet opened
	rs    int
	plain []byte        // opened plaintext not yet read
	short bool          // the last socket read returned less than it asked for
	err   error         // a record failed: every later read fails too
	fails *atomic.Int64 // counts the records that failed their checks; nil: not counted
}

// newRecordConn takes over a socket whose TLS handshake and preface are done; rest is what
// was read past the preface (the start of the peer's records).
func newRecordConn(sock net.Conn, keys recordKeys, entry bool, rest []byte) (*recordConn, error) {
	c := &recordConn{Conn: sock, keys: keys, entry: entry, rekeyEvery: defaultRekeyEvery,
		raw: make([]byte, 0, 2*(recordHeaderLen+maxRecordPlain+recordTagLen))}
	var err error
	if c.seal.aead, c.seal.iv, err = keys(entry, 0); err != nil {
		return nil, err
	}
	if c.open.aead, c.open.iv, err = keys(!entry, 0); err != nil {
		return nil, err
	}
	c.raw = append(c.raw, rest...)
	return c, nil
}

// Write seals p in records of at most maxRecordPlain bytes and writes them at once.
func (c *recordConn) Write(p []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	out := c.out[:0]
	for off := 0; off < len(p); {
		k := min(len(p)-off, maxRecordPlain)
		out = c.appendRecord(out, recordData, p[off:off+k])
		off += k
		if c.seal.seq >= c.rekeyEvery {
			out = c.appendRecord(out, recordRekey, nil)
			aead, iv, err := c.keys(c.entry, c.seal.epoch+1)
			if err != nil {
				return 0, err
			}
			c.seal = recordDir{aead: aead, iv: iv, epoch: c.seal.epoch + 1}
		}
	}
	c.out = out
	if _, err := c.Conn.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (c *recordConn) appendRecord(out []byte, kind byte, p []byte) []byte {
	c.hdr[0] = kind
	binary.BigEndian.PutUint16(c.hdr[1:], uint16(len(p)+recordTagLen))
	nonce := c.seal.nonce()
	c.seal.seq++
	out = append(out, c.hdr[:]...)
	return c.seal.aead.Seal(out, nonce, p, c.hdr[:])
}

// Read returns the plaintext of whole records: every buffered one whose plaintext fits p,
// or, when none is buffered, what one read of the socket completes. A detached socket with
// nothing to read gives errWouldBlock.
func (c *recordConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if len(c.plain) > 0 {
		n := copy(p, c.plain)
		c.plain = c.plain[n:]
		return n, nil
	}
	if c.err != nil {
		return 0, c.err
	}
	for {
		n, err := c.openBuffered(p)
		if n > 0 || err != nil {
			if err != nil {
				c.err = err
				if c.fails != nil && errors.Is(err, ErrCorrupt) {
					c.fails.Add(1)
				}
			}
			return n, err
		}
		if err := c.fill(); err != nil {
			return 0, err
		}
	}
}

// openBuffered opens whole buffered records into p while their plaintext fits; a first
// record larger than p is opened in place and handed out by the next reads.
func (c *recordConn) openBuffered(p []byte) (int, error) {
	n := 0
	for {
		have := c.raw[c.rs:]
		if len(have) < recordHeaderLen {
			return n, nil
		}
		clen := int(binary.BigEndian.Uint16(have[1:3]))
		if clen < recordTagLen || (have[0] != recordData && have[0] != recordRekey) {
			return n, fmt.Errorf("%w: record kind %#x length %d", ErrCorrupt, have[0], clen)
		}
		if len(have) < recordHeaderLen+clen {
			return n, nil
		}
		hdr, ct := have[:recordHeaderLen], have[recordHeaderLen:recordHeaderLen+clen]
		nonce := c.open.nonce()
		plen := clen - recordTagLen
		if have[0] == recordData && plen > len(p)-n {
			if n > 0 {
				return n, nil
			}
			pt, err := c.open.aead.Open(ct[:0], nonce, ct, hdr)
			if err != nil {
				return 0, fmt.Errorf("%w: record %d failed its tag", ErrCorrupt, c.open.seq)
			}
			c.open.seq++
			c.rs += recordHeaderLen + clen
			k := copy(p, pt)
			c.plain = pt[k:]
			return k, nil
		}
		pt, err := c.open.aead.Open(p[n:n], nonce, ct, hdr)
		if err != nil {
			return n, fmt.Errorf("%w: record %d failed its tag", ErrCorrupt, c.open.seq)
		}
		c.open.seq++
		c.rs += recordHeaderLen + clen
		if have[0] == recordRekey {
			if len(pt) != 0 {
				return n, fmt.Errorf("%w: rekey record with %d bytes", ErrCorrupt, len(pt))
			}
			aead, iv, err := c.keys(!c.entry, c.open.epoch+1)
			if err != nil {
				return n, err
			}
			c.open = recordDir{aead: aead, iv: iv, epoch: c.open.epoch + 1}
			continue
		}
		n += len(pt)
	}
}

// fill reads the socket once into raw, after moving the unopened bytes to its front.
func (c *recordConn) fill() error {
	if c.rs > 0 && (c.rs == len(c.raw) || cap(c.raw)-len(c.raw) < recordHeaderLen+maxRecordPlain+recordTagLen) {
		rest := copy(c.raw, c.raw[c.rs:])
		c.raw, c.rs = c.raw[:rest], 0
	}
	free := c.raw[len(c.raw):cap(c.raw)]
	k, err := c.Conn.Read(free)
	c.raw = c.raw[:len(c.raw)+k]
	c.short = k < len(free)
	switch {
	case k > 0:
		return nil
	case errors.Is(err, io.EOF) && len(c.raw) > c.rs:
		return io.ErrUnexpectedEOF
	case err != nil:
		return err
	}
	return nil
}

// drained reports that a read would find nothing without the socket becoming readable
// again: no whole record is buffered and the last read of the socket emptied it. The relay
// loop then waits for epoll (level-triggered) instead of reading to EAGAIN.
func (c *recordConn) drained() bool {
	if len(c.plain) > 0 || !c.short {
		return false
	}
	have := c.raw[c.rs:]
	return len(have) < recordHeaderLen || len(have) < recordHeaderLen+int(binary.BigEndian.Uint16(have[1:3]))
}

// CloseWrite half-closes the socket.
func (c *recordConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// tlsBound sits between crypto/tls and the socket until a mux link leaves TLS: it hands
// TLS at most the rest of the current TLS record, so the bytes the peer sends after its
// preface stay here (rest) instead of in the TLS connection's buffer, where no one could
// take them out. Once pass is set (the connection stays with TLS) it hands out everything.
type tlsBound struct {
	net.Conn
	store []byte
	buf   []byte // read from the socket, not yet handed out
	hdr   [5]byte
	hdrN  int // header bytes of the current record handed out
	body  int // body bytes of the current record not yet handed out
	pass  bool
}

func newTLSBound(c net.Conn) *tlsBound {
	return &tlsBound{Conn: c, store: make([]byte, 5+(1<<14)+256)}
}

func (b *tlsBound) Read(p []byte) (int, error) {
	if len(b.buf) == 0 {
		if b.pass {
			return b.Conn.Read(p)
		}
		n, err := b.Conn.Read(b.store)
		if n == 0 {
			return 0, err
		}
		b.buf = b.store[:n]
	}
	lim := len(b.buf)
	if !b.pass {
		if b.body == 0 {
			lim = min(lim, len(b.hdr)-b.hdrN)
		} else {
			lim = min(lim, b.body)
		}
	}
	n := copy(p, b.buf[:lim])
	if !b.pass {
		if b.body == 0 {
			b.hdrN += copy(b.hdr[b.hdrN:], b.buf[:n])
			if b.hdrN == len(b.hdr) {
				b.body, b.hdrN = int(binary.BigEndian.Uint16(b.hdr[3:5])), 0
			}
		} else {
			b.body -= n
		}
	}
	b.buf = b.buf[n:]
	return n, nil
}

// rest returns the bytes read past the last whole TLS record handed out; an error if TLS
// stopped inside a record.
func (b *tlsBound) rest() ([]byte, error) {
	if b.hdrN != 0 || b.body != 0 {
		return nil, errors.New("tls connection stopped inside a record")
	}
	return append([]byte(nil), b.buf...), nil
}
