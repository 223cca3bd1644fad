package tunnel

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/promtest"
)

// rogue is a WAN connection to an exit that the test writes frame by frame, as an entry
// would, and then breaks.
type rogue struct {
	t         *testing.T
	mux       bool
	wan, sock net.Conn // wan: under TLS or the link's own records, when the exit has them
	enc       *frameEncoder
	dec       *frameDecoder
}

// dialRogue opens a WAN connection to entry's exit with entry's own handshake: hello is
// preface (one client's connection) or muxPreface (a mux link).
func dialRogue(t *testing.T, entry *running, hello string) *rogue {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	wan, sock, err := entry.dialExit(ctx, hello)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { wan.Close(); sock.Close() })
	r := &rogue{t: t, mux: hello == muxPreface, wan: wan, sock: sock, enc: newFrameEncoder(0, 0), dec: newFrameDecoder(wan, entry.cfg.recvWindow(hello == muxPreface))}
	t.Cleanup(r.dec.close)
	return r
}

// frame is raw in one raw frame.
func (r *rogue) frame(raw []byte) []byte {
	r.t.Helper()
	if err := r.enc.begin(frameRaw); err != nil {
		r.t.Fatal(err)
	}
	if err := r.enc.add(raw); err != nil {
		r.t.Fatal(err)
	}
	f, err := r.enc.finish()
	if err != nil {
		r.t.Fatal(err)
	}
	return append([]byte(nil), f...)
}

func (r *rogue) write(wire []byte) {
	r.t.Helper()
	if _, err := r.wan.Write(wire); err != nil {
		r.t.Fatalf("rogue write: %v", err)
	}
}

// data is a data record of stream id, or on a client's connection the bytes themselves.
func (r *rogue) data(id uint32, p []byte) []byte {
	if !r.mux {
		return p
	}
	return append(appendRecord(nil, recData, id, len(p)), p...)
}

// echo sends p on stream id and waits for the echo server's copy; false when the stream
// was reset instead.
func (r *rogue) echo(id uint32, p []byte) bool {
	r.t.Helper()
	r.write(r.frame(r.data(id, p)))
	r.sock.SetReadDeadline(time.Now().Add(5 * time.Second))
	defer r.sock.SetReadDeadline(time.Time{})
	var got []byte
	for !bytes.Equal(got, p) {
		typ, raw, err := r.dec.next()
		if err != nil {
			r.t.Fatalf("rogue: waiting for stream %d's echo: %v", id, err)
		}
		if typ == frameEnd || !r.mux {
			got = append(got, raw...)
			continue
		}
		for len(raw) > 0 {
			rec, rest, err := nextRecord(raw)
			if err != nil {
				r.t.Fatalf("rogue: exit's frame: %v", err)
			}
			raw = rest
			switch {
			case rec.id != id:
			case rec.kind == recReset:
				return false
			case rec.kind == recData:
				got = append(got, rec.payload...)
			}
		}
	}
	return true
}

// pingClient sends one line through c (a client of the entry, to the echo server) and
// checks the echo: the client's stream still works.
func pingClient(t *testing.T, c net.Conn, line string) {
	t.Helper()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	defer c.SetDeadline(time.Time{})
	if _, err := io.WriteString(c, line); err != nil {
		t.Fatalf("client stream: write %q: %v", line, err)
	}
	got := make([]byte, len(line))
	if _, err := io.ReadFull(c, got); err != nil || string(got) != line {
		t.Fatalf("client stream: echo of %q: %q, %v", line, got, err)
	}
}

// waitFaults waits up to 5s for end's counter c to reach want; it returns the faults then.
func waitFaults(end *running, c faultCounter, want int64) FaultStats {
	f := end.Stats().Faults
	for deadline := time.Now().Add(5 * time.Second); c(f) < want && time.Now().Before(deadline); f = end.Stats().Faults {
		time.Sleep(time.Millisecond)
	}
	return f
}

// malformedCase is a malformed input sent to a live exit over a rogue WAN connection.
type malformedCase struct {
	name    string
	tls     bool
	hello   string       // preface or muxPreface
	counter faultCounter // the one that counts it
	check   string       // its label on wirelab_tunnel_input_rejected_total
	// inject sends the malformed bytes; true when they end the whole connection.
	inject func(r *rogue) (endsLink bool)
}

var malformedCases = []malformedCase{
	{"frame checksum, client connection", false, preface, frameChecks, "frame_check", func(r *rogue) bool {
		f := r.frame([]byte("a frame whose payload is flipped after its CRC"))
		f[headerLen+3] ^= 0x08
		r.write(f)
		return true
	}},
	{"frame checksum, mux link", false, muxPreface, frameChecks, "frame_check", func(r *rogue) bool {
		f := r.frame(r.data(1, []byte("a frame whose payload is flipped after its CRC")))
		f[len(f)-1] ^= 0x01
		r.write(f)
		return true
	}},
	{"zstd window over --window, client connection", false, preface, frameChecks, "frame_check", func(r *rogue) bool {
		r.write(oversizedWindow(28))
		return true
	}},
	{"zstd window over --window, mux link", false, muxPreface, frameChecks, "frame_check", func(r *rogue) bool {
		r.write(oversizedWindow(28))
		return true
	}},
	{"mux record kind", false, muxPreface, frameChecks, "frame_check", func(r *rogue) bool {
		r.write(r.frame(appendRecord(nil, recKind(0x47), 1, 0)))
		return true
	}},
	{"record tag", true, muxPreface, recordTags, "record_tag", func(r *rogue) bool {
		rc := r.wan.(*recordConn)
		rec := rc.appendRecord(nil, recordData, r.frame(r.data(1, []byte("sealed, then one tag bit flipped"))))
		rec[len(rec)-1] ^= 0x01
		if _, err := r.sock.Write(rec); err != nil {
			r.t.Fatal(err)
		}
		return true
	}},
	{"binlog event", false, muxPreface, binlogEvents, "binlog_event", func(r *rogue) bool {
		junk := bytes.Repeat([]byte{0x41}, 40) // not a recoded event: its length is not zeroed
		r.write(r.frame(append(appendRecord(nil, recBinlog, 1, len(junk)), junk...)))
		if r.echo(1, []byte("after the bad event")) {
			r.t.Fatal("stream 1 still echoes after a binlog record that does not restore")
		}
		return false
	}},
}

// TestMalformedEndsOnlyItsConnection: a live exit that receives a frame failing its check,
// a mux record that does not parse, a record of the link's own layer failing its AES-GCM
// tag, or a binlog record that does not restore ends only the WAN connection it came on
// (for the binlog record: only its stream, the link carries on), counts it, and keeps
// relaying a client that came in through a real entry before the fault, on the same
// client connection.
func TestMalformedEndsOnlyItsConnection(t *testing.T) {
	for _, tc := range malformedCases {
		t.Run(tc.name, func(t *testing.T) { testMalformed(t, tc) })
	}
}

func testMalformed(t *testing.T, tc malformedCase) {
	server := echoServer(t)
	entryTLS, exitTLS := testTLS(t, tc.tls)
	entry, exit := pair(t, server, Auto, MuxOn, entryTLS, exitTLS)
	client, err := net.Dial("tcp", entry.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	pingClient(t, client, "before the fault\n")

	r := dialRogue(t, entry, tc.hello)
	if r.mux {
		r.write(r.frame(append(appendRecord(nil, recOpen, 1, 0), appendRecord(nil, recOpen, 2, 0)...)))
	}
	for id := uint32(1); id <= 2 && (r.mux || id == 1); id++ {
		if !r.echo(id, fmt.Appendf(nil, "stream %d before the fault", id)) {
			t.Fatalf("stream %d reset before the fault", id)
		}
	}
	endsLink := tc.inject(r)

	f := waitFaults(exit, tc.counter, 1)
	if got := tc.counter(f); got != 1 {
		t.Errorf("counter %d after one malformed input, want 1 (%s)", got, f)
	}
	if all := f.FrameCheckFailures + f.RecordTagFailures + f.BinlogEventErrors; all != tc.counter(f) {
		t.Errorf("another fault counter moved: %s", f)
	}
	_, samples := promtest.Scrape(t, exit.MetricsHandler())
	key := fmt.Sprintf(`wirelab_tunnel_input_rejected_total{check=%q,role="exit"}`, tc.check)
	if got := samples[key]; got != float64(tc.counter(exit.Stats().Faults)) {
		t.Errorf("%s = %v, the stats say %s", key, got, exit.Stats().Faults)
	}
	if endsLink {
		if err := readsUntilClosed(r.sock, 5*time.Second); err != nil {
			t.Errorf("the exit kept the connection the malformed input came on: %v", err)
		}
	} else if !r.echo(2, []byte("stream 2 after stream 1's fault")) {
		t.Error("stream 2 was reset with stream 1")
	}
	pingClient(t, client, "after the fault\n")
}

// faultCounter is one of the fault counters, read as the metrics and the --stats line read
// it: a field of a Stats snapshot.
type faultCounter func(FaultStats) int64

func frameChecks(f FaultStats) int64  { return f.FrameCheckFailures }
func recordTags(f FaultStats) int64   { return f.RecordTagFailures }
func binlogEvents(f FaultStats) int64 { return f.BinlogEventErrors }

// testTLS is a pair of mutual-TLS configs when on, none otherwise.
func testTLS(t *testing.T, on bool) (entryTLS, exitTLS *tls.Config) {
	t.Helper()
	if !on {
		return nil, nil
	}
	entryTLS, exitTLS, _ = testCerts(t)
	return entryTLS, exitTLS
}
