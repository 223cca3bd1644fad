//go:build capture

package tunnel

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// seedWriter writes fuzz seed files (capture-NAME) in Go's corpus format.
type seedWriter struct {
	t   *testing.T
	dir string // testdata/fuzz
}

// clear removes the seeds an earlier capture wrote; inputs a fuzz run added stay.
func (s *seedWriter) clear() {
	old, err := filepath.Glob(filepath.Join(s.dir, "Fuzz*", "capture-*"))
	if err != nil {
		s.t.Fatal(err)
	}
	for _, f := range old {
		if err := os.Remove(f); err != nil {
			s.t.Fatal(err)
		}
	}
}

// write stores one input of target: args in the order of its fuzz function's parameters.
func (s *seedWriter) write(target, name string, args ...any) {
	s.t.Helper()
	var b strings.Builder
	b.WriteString("go test fuzz v1\n")
	for _, a := range args {
		switch v := a.(type) {
		case []byte:
			fmt.Fprintf(&b, "[]byte(%q)\n", v)
		case byte:
			fmt.Fprintf(&b, "byte(%q)\n", v)
		case uint16, uint32:
			fmt.Fprintf(&b, "%T(%v)\n", v, v)
		default:
			s.t.Fatalf("seed %s/%s: argument of type %T", target, name, a)
		}
	}
	dir := filepath.Join(s.dir, target)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		s.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "capture-"+name), []byte(b.String()), 0o644); err != nil {
		s.t.Fatal(err)
	}
}

// maxCorpus bounds a target's committed corpus.
const maxCorpus = 200 << 10

// report logs each corpus's size and fails one past maxCorpus.
func (s *seedWriter) report() {
	dirs, _ := filepath.Glob(filepath.Join(s.dir, "Fuzz*"))
	for _, d := range dirs {
		files, _ := os.ReadDir(d)
		total := 0
		for _, f := range files {
			if info, err := f.Info(); err == nil {
				total += int(info.Size())
			}
		}
		s.t.Logf("%s: %d files, %d bytes", d, len(files), total)
		if total > maxCorpus {
			s.t.Errorf("%s holds %d bytes, more than %d", d, total, maxCorpus)
		}
	}
}

// seedLinkFrames writes a mux link's seeds: the first frames of each direction (the
// frame decoder's), frames with record kinds not seen before in that direction (the record
// parser's), and the first frames as plaintext to seal (the record layer's round trip).
func seedLinkFrames(s *seedWriter, name string, link *tapped, hello string) {
	s.t.Helper()
	if !bytes.HasPrefix(link.fwd, []byte(hello)) {
		s.t.Fatalf("%s: the entry's bytes start % x, want the preface %q", name, link.fwd[:min(len(link.fwd), 8)], hello)
	}
	dirs := []struct {
		name string
		wire []byte
		cuts []byte
		flip byte
	}{
		{"entry-to-exit", link.fwd[len(hello):], []byte{0x03, 0xff, 0x07}, 0},
		{"exit-to-entry", link.back, []byte{0x40, 0x10, 0x31}, 0x20},
	}
	for _, d := range dirs {
		id := name + "-" + d.name
		s.write("FuzzFrameDecoder", id, leadingFrames(d.wire, 8<<10))
		s.write("FuzzRecordRoundTrip", id, leadingFrames(d.wire, 4<<10), d.cuts, uint32(1000), d.flip)
		seen := map[string]bool{}
		for _, p := range frameContents(d.wire) {
			k := recordKinds(p)
			if len(p) > 6<<10 || seen[k] || len(seen) == 3 {
				continue
			}
			seen[k] = true
			s.write("FuzzMuxRecords", id+"-"+k, p)
		}
	}
}

// recordKinds names the kinds of p's records in order of first appearance: "open+data".
func recordKinds(p []byte) string {
	var kinds []string
	for len(p) > 0 {
		r, rest, err := nextRecord(p)
		if err != nil {
			return "unparsed"
		}
		if k := r.kind.String(); !strings.Contains("+"+strings.Join(kinds, "+")+"+", "+"+k+"+") {
			kinds = append(kinds, k)
		}
		p = rest
	}
	return strings.Join(kinds, "+")
}

// seedBinlog writes the binlog targets' seeds: what the server sent the dump's client,
// from its start and from a packet in its middle (the round trip's), and runs of the
// binlog records that crossed the WAN for it (the restorer's).
func seedBinlog(s *seedWriter, server, wan []byte) {
	s.t.Helper()
	s.write("FuzzBinlogRoundTrip", "dump-start", wholePackets(server, 16<<10), []byte{0x40, 0x7f})
	mid := len(wholePackets(server, len(server)/2))
	s.write("FuzzBinlogRoundTrip", "dump-middle", wholePackets(server[mid:], 16<<10), []byte{0x07, 0xff, 0x13})
	runs := binlogRuns(frameContents(wan))
	if len(runs) < 2 {
		s.t.Fatalf("%d runs of binlog records crossed the WAN, want 2 or more", len(runs))
	}
	slices.SortStableFunc(runs, func(a, b []byte) int { return len(b) - len(a) })
	s.write("FuzzBinlogRestore", "dump-longest", wholeRecoded(runs[0], 16<<10), []byte{0x40, 0x7f})
	s.write("FuzzBinlogRestore", "dump-second", wholeRecoded(runs[1], 16<<10), []byte{0x05, 0x33})
}

// wholePackets is the MySQL packets at the start of p, at most max bytes of them (at
// least the first).
func wholePackets(p []byte, max int) []byte {
	end := 0
	for end+4 <= len(p) {
		next := end + 4 + packetLen(p[end:])
		if next > len(p) || (next > max && end > 0) {
			break
		}
		end = next
	}
	return p[:end]
}

// wholeRecoded is the recoded event packets (their length zeroed: the event's size says
// it) at the start of p, at most max bytes of them (at least the first).
func wholeRecoded(p []byte, max int) []byte {
	end := 0
	for end+5+binlogEventHeader <= len(p) {
		next := end + 5 + int(binary.LittleEndian.Uint32(p[end+5+9:]))
		if next > len(p) || (next > max && end > 0) {
			break
		}
		end = next
	}
	return p[:end]
}

// binlogRuns is the payloads of consecutive binlog records in frames, joined: each run
// starts at a recoded packet (a data record ends the run before it).
func binlogRuns(frames [][]byte) [][]byte {
	var runs [][]byte
	var cur []byte
	for _, p := range frames {
		for len(p) > 0 {
			r, rest, err := nextRecord(p)
			if err != nil {
				break
			}
			p = rest
			switch {
			case r.kind == recBinlog:
				cur = append(cur, r.payload...)
			case r.kind == recData && len(cur) > 0:
				runs, cur = append(runs, cur), nil
			}
		}
	}
	if len(cur) > 0 {
		runs = append(runs, cur)
	}
	return runs
}

// seedRecords writes the record opener's seed: a link direction's key material and its
// first records (what follows the TLS handshake and preface in sealed), up to 12 KiB.
func seedRecords(s *seedWriter, name string, key, sealed []byte) {
	s.t.Helper()
	start, ok := recordStart(key, sealed)
	if !ok {
		s.t.Fatalf("%s: no record opens under the exporter's key after the TLS records", name)
	}
	wire := sealed[start:]
	end := 0
	for end+recordHeaderLen <= len(wire) {
		next := end + recordHeaderLen + int(binary.BigEndian.Uint16(wire[end+1:]))
		if next > len(wire) || (next > 12<<10 && end > 0) {
			break
		}
		end = next
	}
	s.write("FuzzRecordOpen", name, key, wire[:end], uint16(16<<10), uint16(1448))
}

// recordStart finds where a link's own records begin in sealed: the first TLS record
// boundary at which a record opens under key at sequence 0.
func recordStart(key, sealed []byte) (int, bool) {
	aead, iv, err := recordCipher(key)
	if err != nil {
		return 0, false
	}
	for off := 0; off+5 <= len(sealed); off += 5 + int(binary.BigEndian.Uint16(sealed[off+3:])) {
		b := sealed[off:]
		clen := int(binary.BigEndian.Uint16(b[1:3]))
		if len(b) >= recordHeaderLen+clen {
			if _, err := aead.Open(nil, iv[:], b[recordHeaderLen:recordHeaderLen+clen], b[:recordHeaderLen]); err == nil {
				return off, true
			}
		}
	}
	return 0, false
}
