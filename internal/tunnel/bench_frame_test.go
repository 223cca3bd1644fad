package tunnel

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"io"
	"math/rand/v2"
	"testing"
	"time"
)

func binlogCorpus() []byte {
	r := rand.New(rand.NewPCG(11, 12))
	return concat(binlogTraffic(r, newTable(r, 10000), 6000)) // ~3.5 MB
}

// BenchmarkFrameEncode measures the sender's framing of 64KiB groups (allocs must be 0).
func BenchmarkFrameEncode(b *testing.B) {
	data := binlogCorpus()
	for _, typ := range []frameType{frameRaw, frameZstd} {
		b.Run(typName(typ), func(b *testing.B) {
			e := newFrameEncoder(DefaultLevel, 0)
			defer e.close()
			b.SetBytes(DefaultGroupMaxSize)
			b.ReportAllocs()
			var wire int
			off := 0
			for b.Loop() {
				if off+DefaultGroupMaxSize > len(data) {
					off = 0
				}
				e.begin(typ)
				e.add(data[off : off+DefaultGroupMaxSize/2])
				e.add(data[off+DefaultGroupMaxSize/2 : off+DefaultGroupMaxSize])
				f, err := e.finish()
				if err != nil {
					b.Fatal(err)
				}
				wire += len(f)
				off += DefaultGroupMaxSize
			}
			b.ReportMetric(float64(b.N*DefaultGroupMaxSize)/float64(wire), "ratio")
		})
	}
}

// BenchmarkFrameDecode measures the receiver: header, checksum and (zstd) decoding.
func BenchmarkFrameDecode(b *testing.B) {
	data := binlogCorpus()
	for _, typ := range []frameType{frameRaw, frameZstd} {
		b.Run(typName(typ), func(b *testing.B) {
			var msgs [][]byte
			for off := 0; off+DefaultGroupMaxSize <= len(data); off += DefaultGroupMaxSize {
				msgs = append(msgs, data[off:off+DefaultGroupMaxSize])
			}
			wire := encodeStream(b, msgs, []frameType{typ})
			src := bytes.NewReader(wire)
			d := newFrameDecoder(src, DefaultWindow)
			defer d.close()
			b.SetBytes(DefaultGroupMaxSize)
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := d.next(); err != nil {
					if err != io.EOF {
						b.Fatal(err)
					}
					// Start the stream over: a new zstd stream needs a reset decoder.
					src.Reset(wire)
					if d.dec != nil {
						d.dec.Reset(&d.src)
					}
				}
			}
		})
	}
}

func typName(t frameType) string {
	if t == frameZstd {
		return "zstd"
	}
	return "raw"
}

// BenchmarkRatio compares, on the same bytes, what goes on the wire and the CPU it costs:
// MySQL protocol compression (zlib default level, per packet as it is usually described, and per
// write of up to 16KiB as net_flush really does; 7-byte header, payloads < 50 bytes sent
// as is), DTLE (gzip level 1, fresh stream per group) and the tunnel (zstd stream kept
// across groups). MB/s is per core (one goroutine); "ratio" is raw/wire; "cpu-ms/MB" is the
// process's CPU time (getrusage), so the garbage collector's work on other cores counts too.
func BenchmarkRatio(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	_, resps := readOnlyTraffic(r, newTable(r, 10000), 40)
	r = rand.New(rand.NewPCG(7, 8))
	binlog := binlogTraffic(r, newTable(r, 10000), 3000)
	corpora := []struct {
		name string
		msgs [][]byte // one message = one write by the server
	}{{"readonly", resps}, {"binlog", binlog}}
	methods := []struct {
		name string
		fn   func(msgs [][]byte) int
	}{
		{"mysql-zlib-per-packet", zlibPerPacket},
		{"mysql-zlib-per-write", zlibPerWrite},
		{"dtle-gzip1-per-group", gzipPerGroup},
		{"tunnel-zstd1-per-msg", tunnelWire(1, false)},
		{"tunnel-zstd1-64KiB", tunnelWire(1, true)},
		{"tunnel-zstd3-64KiB", tunnelWire(3, true)},
		{"tunnel-off-per-msg", tunnelRawWire},
	}
	for _, c := range corpora {
		raw := len(concat(c.msgs))
		for _, m := range methods {
			b.Run(c.name+"/"+m.name, func(b *testing.B) {
				b.SetBytes(int64(raw))
				b.ReportAllocs()
				var wire int
				cpu0 := cpuTime() // the process's CPU, garbage collection included, not wall time
				for b.Loop() {
					wire = m.fn(c.msgs)
				}
				cpu := cpuTime() - cpu0
				b.ReportMetric(float64(raw)/float64(wire), "ratio")
				b.ReportMetric(float64(cpu)/float64(time.Millisecond)/float64(b.N)/(float64(raw)/1e6), "cpu-ms/MB")
			})
		}
	}
}

var zw, _ = zlib.NewWriterLevel(io.Discard, zlib.DefaultCompression)

// mysqlCompressed is the wire size of one compressed-protocol packet carrying p.
func mysqlCompressed(p []byte, buf *bytes.Buffer) int {
	const header, minCompress = 7, 50
	if len(p) < minCompress {
		return header + len(p)
	}
	buf.Reset()
	zw.Reset(buf)
	zw.Write(p)
	zw.Close()
	return header + min(buf.Len(), len(p))
}

func zlibPerPacket(msgs [][]byte) int {
	var buf bytes.Buffer
	wire := 0
	for _, m := range msgs {
		for len(m) >= 4 {
			n := 4 + (int(m[0]) | int(m[1])<<8 | int(m[2])<<16)
			n = min(n, len(m))
			wire += mysqlCompressed(m[:n], &buf)
			m = m[n:]
		}
	}
	return wire
}

func zlibPerWrite(msgs [][]byte) int {
	var buf bytes.Buffer
	wire := 0
	for _, m := range msgs {
		for len(m) > 0 {
			n := min(len(m), 16<<10)
			wire += mysqlCompressed(m[:n], &buf)
			m = m[n:]
		}
	}
	return wire
}

var gw, _ = gzip.NewWriterLevel(io.Discard, 1)

// gzipPerGroup is DTLE: 64KiB groups of whole messages, each a fresh gzip stream.
func gzipPerGroup(msgs [][]byte) int {
	var buf bytes.Buffer
	wire := 0
	flush := func(g []byte) {
		buf.Reset()
		gw.Reset(&buf)
		gw.Write(g)
		gw.Close()
		wire += 4 + buf.Len()
	}
	forGroups(msgs, true, flush)
	return wire
}

// forGroups calls fn per message, or per 64KiB of messages when grouped.
func forGroups(msgs [][]byte, grouped bool, fn func([]byte)) {
	if !grouped {
		for _, m := range msgs {
			fn(m)
		}
		return
	}
	all := concat(msgs)
	for off := 0; off < len(all); off += DefaultGroupMaxSize {
		fn(all[off:min(off+DefaultGroupMaxSize, len(all))])
	}
}

func tunnelWire(level int, grouped bool) func([][]byte) int {
	return func(msgs [][]byte) int {
		e := newFrameEncoder(level, 0)
		defer e.close()
		wire := 0
		forGroups(msgs, grouped, func(g []byte) {
			e.begin(frameZstd)
			e.add(g)
			f, _ := e.finish()
			wire += len(f)
		})
		return wire
	}
}

func tunnelRawWire(msgs [][]byte) int {
	return len(concat(msgs)) + headerLen*len(msgs)
}
