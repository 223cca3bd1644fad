package tunnel

import (
	"math/rand/v2"
	"testing"
	"time"
)

// BenchmarkMuxRatio compresses the server → client bytes of 32 oltp_read_only connections
// (pareto-hot rows over a 100000-row table, each reply flushed as the tunnel flushes an idle
// group) as the tunnel does without the mux (one stream per connection, level 1, 1 MiB
// window) and with it (one stream for all, records tagged per connection) at each
// level --level auto can pick and two windows. "ratio" is reply bytes / frame bytes;
// "ratio-first" and "ratio-last" are the first and last fifth of the bytes: how the ratio
// grows as the shared history fills.
func BenchmarkMuxRatio(b *testing.B) {
	const conns, txns = 32, 25
	r := rand.New(rand.NewPCG(11, 12))
	tbl := newTable(r, 100_000)
	var replies [conns][][]byte
	for c := range replies {
		_, replies[c] = readOnlyPicked(r, tbl, txns, paretoPick(r, len(tbl.rows)))
	}
	cases := []struct {
		name          string
		mux           bool
		level, window int
	}{
		{"per-conn/level=1/window=1MiB", false, 1, 1 << 20},
		{"mux/level=1/window=1MiB", true, 1, 1 << 20},
		{"mux/level=1/window=16MiB", true, 1, 16 << 20},
		{"mux/level=3/window=16MiB", true, 3, 16 << 20},
		{"mux/level=7/window=16MiB", true, 7, 16 << 20},
		{"mux/level=11/window=16MiB", true, 11, 16 << 20},
		{"mux/level=11/window=64MiB", true, 11, 64 << 20},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				r := compressReplies(b, replies[:], tc.mux, tc.level, tc.window)
				b.ReportMetric(r.ratio(0, 5), "ratio")
				b.ReportMetric(r.ratio(0, 1), "ratio-first")
				b.ReportMetric(r.ratio(4, 5), "ratio-last")
				b.ReportMetric(r.raw/1e6/r.took.Seconds(), "MB/s")
				b.ReportMetric(r.raw/1e6, "MB")
			}
		})
	}
}

// ratioRun is what compressReplies measured: bytes in and out per fifth of the input.
type ratioRun struct {
	raw    float64
	fifths [5][2]float64 // raw, wire
	took   time.Duration
}

// ratio is raw/wire over fifths [from, to).
func (r ratioRun) ratio(from, to int) float64 {
	var raw, wire float64
	for _, f := range r.fifths[from:to] {
		raw, wire = raw+f[0], wire+f[1]
	}
	return raw / wire
}

// compressReplies frames message i of every connection in turn, each as its own zstd
// frame: with one encoder per connection, or (mux) one for all with record headers.
func compressReplies(b *testing.B, replies [][][]byte, mux bool, level, window int) ratioRun {
	encs := make([]*frameEncoder, len(replies))
	for c := range encs {
		if c == 0 || !mux {
			encs[c] = newFrameEncoder(level, window)
			defer encs[c].close()
		} else {
			encs[c] = encs[0]
		}
	}
	var total float64
	for _, rp := range replies {
		for _, m := range rp {
			total += float64(len(m))
		}
	}
	var run ratioRun
	var rec []byte
	start := time.Now()
	for i, sent := 0, true; sent; i++ {
		sent = false
		for c, rp := range replies {
			if i >= len(rp) {
				continue
			}
			sent = true
			e := encs[c]
			e.begin(frameZstd)
			if mux {
				rec = appendRecord(rec[:0], recData, uint32(c+1), len(rp[i]))
				e.add(rec)
			}
			e.add(rp[i])
			f, err := e.finish()
			if err != nil {
				b.Fatal(err)
			}
			q := min(4, int(5*run.raw/total))
			run.raw += float64(len(rp[i]))
			run.fifths[q][0] += float64(len(rp[i]))
			run.fifths[q][1] += float64(len(f))
		}
	}
	run.took = time.Since(start)
	return run
}
