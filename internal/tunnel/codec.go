package tunnel

import (
	"fmt"
	"io"
	"math/bits"

	"github.com/klauspost/compress/zstd"
)

// zstdStream is one direction's zstd encoder: Write adds raw bytes, Flush ends a block so
// that everything written so far decodes on the other side, Close releases the encoder.
// The receiver decodes every stream with klauspost's decoder (frame.go).
type zstdStream interface {
	io.Writer
	Flush() error
	Close()
}

// zstdCodec is the zstd implementation a sender encodes with. The build picks one
// (codec_cgo.go, codec_nocgo.go): with cgo, libzstd's own levels from libFromLevel up (on a
// captured replication stream its 11 compresses as well as the pure-Go best encoder at about
// twice the speed, its 13 and 16 9% and 17% better at lower speeds: docs/bench-tunnel.md);
// without, the pure-Go encoders throughout.
type zstdCodec struct {
	// name says which implementation runs (`tunnel --help`).
	name string
	// levels is the ladder --level auto climbs (level.go), weakest first.
	levels []int
	// open starts a stream at level that writes to w and keeps window bytes of history.
	open func(w io.Writer, level, window int) (zstdStream, error)
	// same reports whether levels a and b are one encoder, so a change between them keeps
	// the stream and its history.
	same func(a, b int) bool
}

// longFromLevel is the first level that takes a link's long window (LongMuxWindow): the
// pure-Go best encoder's, and libzstd's strong levels.
const longFromLevel = 10

// goLevels are klauspost's four encoders: 1-2 fastest, 3-5 default, 6-9 better, 10+ best.
var goLevels = []int{1, 3, 7, 11}

// goCodec encodes every level with klauspost's pure-Go encoders.
var goCodec = zstdCodec{
	name:   "pure-Go zstd (github.com/klauspost/compress), 4 encoders: 1-2 fastest, 3-5 default, 6-9 better, 10-22 best",
	levels: goLevels,
	open:   openGoStream,
	same:   sameGoEncoder,
}

func sameGoEncoder(a, b int) bool {
	return zstd.EncoderLevelFromZstd(a) == zstd.EncoderLevelFromZstd(b)
}

// goStream is a klauspost encoder.
type goStream struct{ *zstd.Encoder }

func (s goStream) Close() { s.Reset(nil) }

func openGoStream(w io.Writer, level, window int) (zstdStream, error) {
	// Not WithLowerEncoderMem: its history buffer is the window plus one block, so the
	// encoder moves the whole window down every 128 KiB of input (with a 16 MiB window,
	// 128 bytes copied per byte encoded). Twice the window moves it once per window.
	enc, err := zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(level)),
		zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(window), zstd.WithEncoderCRC(false))
	if err != nil {
		return nil, fmt.Errorf("create zstd encoder (level %d, window %d): %w", level, window, err)
	}
	return goStream{enc}, nil
}

// windowLog is log2 of a power-of-two window.
func windowLog(window int) int { return bits.Len(uint(window)) - 1 }
