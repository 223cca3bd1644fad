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
				var encs [conns]*frameEncoder
				for c := range encs {
					if c == 0 || !tc.mux {
						encs[c] = newFrameEncoder(tc.level, tc.window)
					} else {
						encs[c] = encs[0]
					}
				}
				var raw, wire, total int64
				var fifths [5][2]int64
				for _, rp := range replies {
					for _, m := range rp {
						total += int64(len(m))
					}
				}
				var rec []byte
				start := time.Now()
				for i := 0; ; i++ { // message i of every connection in turn
					sent := false
					for c := range conns {
						if i >= len(replies[c]) {
							continue
						}
						sent = true
						m := replies[c][i]
						e := encs[c]
						e.begin(frameZstd)
						if tc.mux {
							rec = appendRecord(rec[:0], recData, uint32(c+1), len(m))
							e.add(rec)
						}
						e.add(m)
						f, err := e.finish()
						if err != nil {
							b.Fatal(err)
						}
						q := min(4, int(5*raw/total))
						raw += int64(len(m))
						wire += int64(len(f))
						fifths[q][0] += int64(len(m))
						fifths[q][1] += int64(len(f))
					}
					if !sent {
						break
					}
				}
				el := time.Since(start)
				for c := range encs {
					if c == 0 || !tc.mux {
						encs[c].close()
					}
				}
				b.ReportMetric(float64(raw)/float64(wire), "ratio")
				b.ReportMetric(float64(fifths[0][0])/float64(fifths[0][1]), "ratio-first")
				b.ReportMetric(float64(fifths[4][0])/float64(fifths[4][1]), "ratio-last")
				b.ReportMetric(float64(raw)/1e6/el.Seconds(), "MB/s")
				b.ReportMetric(float64(raw)/1e6, "MB")
			}
		})
	}
}
