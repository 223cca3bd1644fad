package tunnel

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"testing"
)

// The seed corpora in testdata/fuzz/FuzzBinlogRoundTrip and FuzzBinlogRestore come from a
// real binlog dump through the tunnel (mariadb-binlog --read-from-remote-server against a
// real MariaDB, its binlog written by sysbench): what the server sent the client, and the
// binlog records that crossed the WAN for it. TestCaptureFuzzSeeds rewrites them
// (frame_fuzz_test.go has the command).
//
// Run the targets with: go test -run '^$' -fuzz '^FuzzBinlogRoundTrip$' ./internal/tunnel/
// (and '^FuzzBinlogRestore$').

// FuzzBinlogRoundTrip: whatever a server sends, read in pieces of any size, with the dump
// starting at any read, the exit's recoder cuts each read into data and binlog pieces that
// cover it in order, and the entry's restorer, given the binlog pieces in records of any
// size, gives back exactly the server's bytes: restore(recode(x)) == x, one restored packet
// per recoded one. Nothing panics.
func FuzzBinlogRoundTrip(f *testing.F) {
	f.Fuzz(func(t *testing.T, stream, cuts []byte) {
		size := cutter(cuts)
		armAt := size() % 8 // the read during which the client's dump command arrived
		if got, _ := binlogPass(t, stream, armAt, size, size); !bytes.Equal(got, stream) {
			t.Fatalf("restored %d bytes differ from the %d the server sent", len(got), len(stream))
		}
	})
}

// FuzzBinlogRestore: whatever a stream's binlog records carry, cut anywhere, the restorer
// gives whole event packets (length, sequence and CRC32 filled in, the CRC matching the
// event) or fails with errBinlogEvent, and never gives more bytes than it got. It never
// panics.
func FuzzBinlogRestore(f *testing.F) {
	f.Fuzz(func(t *testing.T, recs, cuts []byte) {
		size := cutter(cuts)
		var d binlogDecoder
		out := 0
		for p := recs; len(p) > 0; {
			rec := bytes.Clone(p[:min(len(p), size())])
			p = p[len(rec):]
			pkts, err := d.decode(rec)
			if err != nil {
				if !errors.Is(err, errBinlogEvent) {
					t.Fatalf("restore error %v is not errBinlogEvent", err)
				}
				return
			}
			checkEventPackets(t, pkts)
			out += len(pkts)
		}
		if out > len(recs) {
			t.Fatalf("restored %d bytes from %d", out, len(recs))
		}
	})
}

// checkEventPackets fails t unless p is whole event packets: length, sequence id, 0x00,
// an event whose size is the packet's and whose CRC32 matches.
func checkEventPackets(t *testing.T, p []byte) {
	t.Helper()
	for len(p) > 0 {
		if len(p) < binlogMinPacket {
			t.Fatalf("%d bytes left, short of an event packet", len(p))
		}
		n := packetLen(p)
		if 4+n > len(p) || p[4] != 0 {
			t.Fatalf("packet of %d bytes (header % x) in %d", n, p[:5], len(p))
		}
		ev := p[5 : 4+n]
		size := binary.LittleEndian.Uint32(ev[9:13])
		if int(size) != len(ev) || crc32.ChecksumIEEE(ev[:size-4]) != binary.LittleEndian.Uint32(ev[size-4:]) {
			t.Fatalf("restored event of %d bytes says size %d, or its CRC does not match", len(ev), size)
		}
		p = p[4+n:]
	}
}
