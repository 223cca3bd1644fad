//go:build cgo

package tunnel

import (
	"fmt"
	"io"

	"github.com/valyala/gozstd"
)

// libFromLevel is the first level libzstd encodes; below it the pure-Go encoders do, which
// cost no more than libzstd's fast levels on small frames and keep a link's cheap levels
// free of cgo calls.
const libFromLevel = 10

// libLevels put libzstd's 13 where the pure-Go ladder has its best encoder. On a captured
// binlog stream with the table's rows in the 128 MiB window, 4 KiB frames read 4.39x at
// pure-Go best, 4.37x at libzstd 11 (15 MB/s of a CPU), 4.77x at 13 (4.8 MB/s) and 5.11x
// at 16 (2.5 MB/s); 17 and 19 compressed no better than 16 at half and a third of its
// speed. 16 is not on the ladder: in the replication study, at the loads where the 2 Mbit
// link is the limit, the machine's two cores are saturated and 16's encoder stepped down
// (busy over levelDown), and every change of level starts a new stream and loses the long
// window's history; one strong level keeps it (docs/bench-tunnel.md).
var libLevels = []int{1, 3, 7, 13}

// codec: built with cgo, levels from libFromLevel up are libzstd's (gozstd bundles libzstd
// 1.5.7 as a static library), the rest pure Go.
var codec = zstdCodec{
	name: "pure-Go zstd (github.com/klauspost/compress) for levels 1-9 (1-2 fastest, 3-5 default, 6-9 better), " +
		"libzstd 1.5.7 (github.com/valyala/gozstd, cgo) for 10-22",
	levels: libLevels,
	open: func(w io.Writer, level, window int) (zstdStream, error) {
		if level < libFromLevel {
			return openGoStream(w, level, window)
		}
		return openLibStream(w, level, window)
	},
	same: func(a, b int) bool {
		if a >= libFromLevel || b >= libFromLevel {
			return a == b
		}
		return sameGoEncoder(a, b)
	},
}

// libStream is a libzstd streaming encoder.
type libStream struct{ *gozstd.Writer }

func (s libStream) Close() { s.Release() }

func openLibStream(w io.Writer, level, window int) (zstdStream, error) {
	// gozstd panics on parameters libzstd refuses: check them here.
	wl := windowLog(window)
	if level > 22 || wl < gozstd.WindowLogMin || wl > gozstd.WindowLogMax64 || 1<<wl != window {
		return nil, fmt.Errorf("create libzstd encoder: level %d, window %d: want a level up to 22 and a power of two window from 2^%d to 2^%d",
			level, window, gozstd.WindowLogMin, gozstd.WindowLogMax64)
	}
	return libStream{gozstd.NewWriterParams(w, &gozstd.WriterParams{CompressionLevel: level, WindowLog: wl})}, nil
}
