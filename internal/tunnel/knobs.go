package tunnel

// The tunnel's knobs: their types, values and defaults (config.go parses and checks them).

import (
	"runtime"
	"time"
)

// Role says which end of the tunnel this process is.
type Role string

const (
	// Entry listens for plain clients (a mysql client, a replica) and dials the exit.
	Entry Role = "entry"
	// Exit listens for entries and dials the real server.
	Exit Role = "exit"
)

// Mode is the compression policy of the sending side.
type Mode string

const (
	// Auto compresses while the WAN is the bottleneck (writes wait, or the WAN socket
	// shows a queue in TCP_INFO), sends raw otherwise.
	Auto Mode = "auto"
	// Zstd compresses every group.
	Zstd Mode = "zstd"
	// Off sends raw frames only (still grouped and checksummed).
	Off Mode = "off"
)

// Defaults, chosen by measurement (see scripts/bench-tunnel.sh and the package benchmarks).
const (
	// DefaultLevel is zstd level 1 (klauspost SpeedFastest): on MySQL-like streams it gives
	// most of the ratio of level 3 at a fraction of the CPU.
	DefaultLevel = 1
	// DefaultGroupMaxSize bounds a frame; past 64KiB ratio and syscall savings flatten out
	// while a frame's latency on a narrow link keeps growing.
	DefaultGroupMaxSize = 64 << 10
	// DefaultGroupTimeout bounds how long a continuously fed group stays open. A group is
	// also closed as soon as the source has nothing more to read, so a lone request never
	// waits for it.
	DefaultGroupTimeout = 2 * time.Millisecond
	// MaxGroupSize is the protocol limit on a frame's raw size; receivers reject larger.
	MaxGroupSize = 16 << 20
	// DefaultWindow is the zstd window of one connection's direction without the mux: it
	// holds thousands of row images and bounds memory per connection.
	DefaultWindow = 1 << 20
	// DefaultMuxWindow is the zstd window of each direction of a mux link, shared by every
	// connection it carries. 16 MiB is several seconds of a 20-50 Mbit link's raw traffic
	// (hot rows read again by other connections are still in it) and more than the match
	// tables of the fastest to better encoders reach, at 16 MiB of memory per direction and
	// end. The best encoder reaches further: LongMuxWindow.
	DefaultMuxWindow = 16 << 20
	// LongMuxWindow is the window of a mux link's best encoder (levels 10-22) when --window
	// is not given. The level policy picks that encoder where the link, not the CPU, is the
	// limit, and there the window decides the ratio: the best encoder finds matches as far
	// back as the window reaches, so a row image the link carried minutes ago (the
	// before-image of an UPDATE, a row read again) is sent as a reference. On a captured
	// binlog stream of oltp_write_only whose table (19 MB of rows) had passed before, 4 KiB
	// frames at level 11 read 2.94x with the 16 MiB window and 4.00x with 64 MiB
	// (BenchmarkCaptureWindow). Memory: the encoder and the receiver's decoder each reserve
	// twice the window, touched only as history accumulates.
	LongMuxWindow = 128 << 20
	// MaxWindow bounds --window.
	MaxWindow = 256 << 20
	// DefaultStatsEvery is the period of the --stats line.
	DefaultStatsEvery = 5 * time.Second
	// DefaultDrainTimeout is how long a stopping end lets open streams run (--drain-timeout):
	// long enough for a request or a short transaction, short of a service manager's own
	// stop timeout (systemd's 90 s).
	DefaultDrainTimeout = 30 * time.Second
)

// windows are the zstd windows of an end whose --window is window (0: not given) on a mux
// link or on a connection of its own: its encoders' (long: the best encoder's, levels
// 10-22) and, as long is the largest of them, the largest its decoders accept. Both ends
// are configured by one operator, so a peer sends with no more than this end would: a
// zstd stream declaring more is refused before its decoder reserves twice that window
// (frameDecoder.checkWindow), and the connection it came on ends.
func windows(window int, mux bool) (short, long int) {
	switch {
	case window != 0:
		return window, window
	case mux:
		return DefaultMuxWindow, LongMuxWindow
	default:
		return DefaultWindow, DefaultWindow
	}
}

// recvWindow is the largest zstd window this end's decoders accept on a mux link (mux) or
// on a connection of its own.
func (c Config) recvWindow(mux bool) int {
	_, long := windows(c.Window, mux)
	return long
}

// Codec names the zstd implementation the sender encodes with (`tunnel --help` says it):
// pure Go, so the tunnel builds and runs without cgo. Its levels are four encoders. libzstd
// (through a cgo binding) was measured against them and not adopted: on a captured binlog
// stream with the table's rows in the window its 13 and 16 compressed 9% and 16% better
// than level 11, but in the replication study, alternating with this encoder, the tunnel
// with libzstd 13 sustained the same load and carried the binlog no better near the
// link's limit (16 stepped down there on a saturated box, and a change of level loses the
// window's history). docs/bench-tunnel.md has the figures.
const Codec = "pure-Go zstd (github.com/klauspost/compress)"

// MuxMode says whether an entry carries all client connections over one WAN connection.
type MuxMode string

const (
	// MuxOn carries every client connection over one WAN connection, one zstd stream per
	// direction shared by all of them (mux.go).
	MuxOn MuxMode = "on"
	// MuxOff opens one WAN connection per client connection.
	MuxOff MuxMode = "off"
)

// DefaultMux is the entry's mode when Config.Mux is empty.
// The mux link is the default: at 20 mbit it carried 1.7-2.0× protocol compression's TPS
// against 1.5× for one stream per connection, and replication's sustainable load rose; it
// costs about a tenth of the TPS of one connection per client on an unshaped wire.
const DefaultMux = MuxOn

// DefaultLinks is an entry's Config.Links when 0: one mux link per CPU, so that as many
// clients' round trips can be relayed at once as the machine has cores.
func DefaultLinks() int { return runtime.NumCPU() }

// MaxLinks bounds Config.Links.
const MaxLinks = 64

// LinkCPUs says where the relay threads of a process's mux links run.
type LinkCPUs string

const (
	// LinkCPUsSpread keeps each link's relay thread on one CPU of those the process may
	// use, a new link on the CPU with the fewest (the lowest-numbered of them). A relay
	// thread the kernel may move takes its link's clients and server threads with it, one
	// CPU to the other, and leaves a CPU idle while the other has work: at 2 clients on two
	// CPUs, two socat hops per connection kept each connection on one CPU and relayed more.
	// Held on its CPU, the thread draws its link's other threads to it (docs/bench-tunnel.md).
	LinkCPUsSpread LinkCPUs = "spread"
	// LinkCPUsFree lets the kernel place and move the relay threads.
	LinkCPUsFree LinkCPUs = "free"
)

// DefaultLinkCPUs is Config.LinkCPUs when empty.
const DefaultLinkCPUs = LinkCPUsSpread

// BinlogMode is what an exit does with a MySQL binlog dump on a mux link (binlog.go).
type BinlogMode string

const (
	// BinlogRecode zeroes the fields of each event packet the entry recomputes.
	BinlogRecode BinlogMode = "recode"
	// BinlogRaw sends the event packets as they come.
	BinlogRaw BinlogMode = "raw"
)

// GroupWait is how long a mux link's frame stays open for more bytes after its first,
// DTLE's GroupTimeout: a one-way stream such as a binlog comes a transaction at a time,
// and a frame per transaction pays zstd's block tables, a TLS record and a packet each
// time, while a frame of several transactions compresses better and pays them once. The
// zero value sends at once (what a request/reply client needs: a wait is added to every
// round trip). A frame is sent when the wait has passed, when a group's worth
// (GroupMaxSize) is ready, or at once when it carries a connection's open, end or reset.
type GroupWait struct {
	// Auto waits GroupWaitAutoShare of the WAN's round trip (the lowest smoothed RTT
	// TCP_INFO showed over the last 10-20 s, rttFloor): a replica's lag grows by at most
	// that share, on any link.
	Auto bool
	D    time.Duration // a fixed wait, when not Auto
}

const (
	// GroupWaitAutoShare is the share of the WAN's round trip that --group-wait auto waits.
	GroupWaitAutoShare = 0.25
	// MaxGroupWait bounds a fixed --group-wait.
	MaxGroupWait = 10 * time.Second
)

// String is the --group-wait value of w.
func (w GroupWait) String() string {
	if w.Auto {
		return "auto"
	}
	return w.D.String()
}

// IsZero reports whether w sends at once.
func (w GroupWait) IsZero() bool { return !w.Auto && w.D == 0 }

// at is the wait on a link whose round trip is rtt (0 while unmeasured: no wait).
func (w GroupWait) at(rtt time.Duration) time.Duration {
	if w.Auto {
		return time.Duration(float64(rtt) * GroupWaitAutoShare)
	}
	return w.D
}
