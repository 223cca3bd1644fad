package tunnel

import (
	"fmt"
	"sync/atomic"
	"time"
)

// DirStats counts one direction at this end. Raw bytes are what the local peer sent or
// received; wire bytes are frame bytes on the WAN (headers included, TLS excluded).
type DirStats struct {
	RawBytes   int64
	WireBytes  int64
	RawFrames  int64
	ZstdFrames int64
}

// Groups is the number of data frames (one per group).
func (d DirStats) Groups() int64 { return d.RawFrames + d.ZstdFrames }

// Ratio is raw/wire bytes; 0 before any traffic.
func (d DirStats) Ratio() float64 {
	if d.WireBytes == 0 {
		return 0
	}
	return float64(d.RawBytes) / float64(d.WireBytes)
}

// FlushStats counts why the sender closed its groups.
type FlushStats struct {
	Size    int64 // the group reached GroupMaxSize
	Timeout int64 // GroupTimeout passed since the group's first byte (per connection), or a mux frame waited GroupWait
	Idle    int64 // the source had nothing more to read right now
	Inline  int64 // of Idle: a lone short read framed by the reader itself (group.go's fast path)
}

// Stats is a snapshot of a tunnel end. Send is local peer → WAN (encoded here), Recv is
// WAN → local peer (decoded here): at an entry Send is client→server traffic, at an exit
// it is server→client traffic.
type Stats struct {
	Role         Role
	Conns        int64 // connections accepted
	ActiveConns  int64
	Failed       int64 // connections that ended with an error (dial, handshake, corrupt frame, reset)
	Corrupt      int64 // WAN connections (one client's, or a mux link) malformed input ended
	Send, Recv   DirStats
	Flush        FlushStats
	AutoSwitches int64 // auto-mode decisions that changed raw↔zstd
	Probe        ProbeStats
	Mux          MuxStats
	// StreamResets counts connections and mux streams that ended in a reset: an error at
	// either end, a failed link, a stop.
	StreamResets int64
	// TLSRefused counts WAN handshakes that failed: the peer's certificate, or ours, refused.
	TLSRefused int64
	// Faults is malformed input from the WAN, by the check that caught it.
	Faults FaultStats
}

// FaultStats count malformed input from the WAN, each where it is caught. Each ends only
// the connection it came on: a frame or record its WAN connection (one client's, or a mux
// link with its streams: Stats.Corrupt), a binlog event its stream.
type FaultStats struct {
	// FrameCheckFailures: frames that failed their header, zstd or CRC32C check (a zstd frame
	// declaring a window larger than this end's --window among them), and mux frames whose
	// records do not parse or break the protocol (a record for a stream never opened,
	// bytes past a stream's credit, an end frame on a link).
	FrameCheckFailures int64
	// RecordTagFailures: a mux link's own AES-GCM records (records.go) that failed their header
	// check or their tag.
	RecordTagFailures int64
	// BinlogEventErrors: binlog records (binlog.go) that do not restore to events, and streams
	// whose data record or fin came inside a cut binlog packet.
	BinlogEventErrors int64
}

// MuxStats describe the mux links of this end (zero without the mux).
type MuxStats struct {
	Links        int64 // WAN connections carrying streams, opened or accepted
	Level        int   // zstd level of the last zstd frame sent, on whichever link sent it
	LevelChanges int64 // level changes by --level auto, all links
	Window       int   // zstd window of this end's sending direction
	// LinkRate is the bytes/s a WAN connection delivers as --level auto reckons it, the
	// last link to decide (0: not measured); with several links each reckons its own share.
	LinkRate int64
	// BinlogSent and BinlogRestored count binlog event packets this end recoded for the
	// WAN (the exit) and restored from it (the entry): binlog.go. BinlogPassed counts the
	// packets of a binlog dump the exit sent as they came (they did not check, or a read cut them).
	BinlogSent, BinlogRestored, BinlogPassed int64
	// LinksOpen is the mux links open now (Links counts every one opened or accepted).
	LinksOpen int64
	// CreditStalls counts the times a stream had bytes to send and no credit left.
	CreditStalls int64
	// StreamWindow is the largest window this end's streams granted their sender
	// (streamWindow, or grown where the window set a stream's rate: stream.grow).
	StreamWindow int64
}

// ProbeStats are auto mode's TCP_INFO samples of WAN sockets (queue.go): how many showed a
// queue (the link is the bottleneck: compress) or none, and the most recent one's view.
type ProbeStats struct {
	Queued, Clear int64
	RTT, MinRTT   time.Duration // of the last sample
	Notsent       int64         // bytes, last sample
}

// String is the --stats line.
func (s Stats) String() string {
	return fmt.Sprintf("tunnel %s: conns=%d active=%d failed=%d corrupt=%d | send raw=%s wire=%s ratio=%.2f groups=%d zstd=%d raw=%d | recv raw=%s wire=%s ratio=%.2f groups=%d zstd=%d raw=%d | flush size=%d timeout=%d idle=%d inline=%d | auto switches=%d queued=%d clear=%d last rtt=%v min_rtt=%v notsent=%s",
		s.Role, s.Conns, s.ActiveConns, s.Failed, s.Corrupt,
		human(s.Send.RawBytes), human(s.Send.WireBytes), s.Send.Ratio(), s.Send.Groups(), s.Send.ZstdFrames, s.Send.RawFrames,
		human(s.Recv.RawBytes), human(s.Recv.WireBytes), s.Recv.Ratio(), s.Recv.Groups(), s.Recv.ZstdFrames, s.Recv.RawFrames,
		s.Flush.Size, s.Flush.Timeout, s.Flush.Idle, s.Flush.Inline, s.AutoSwitches,
		s.Probe.Queued, s.Probe.Clear, s.Probe.RTT, s.Probe.MinRTT, human(s.Probe.Notsent)) + s.Mux.String() + s.Faults.String()
}

// String is the faults part of the --stats line.
func (f FaultStats) String() string {
	return fmt.Sprintf(" | faults frame_check=%d record_tag=%d binlog_events=%d",
		f.FrameCheckFailures, f.RecordTagFailures, f.BinlogEventErrors)
}

// String is the mux part of the --stats line ("" without the mux).
func (m MuxStats) String() string {
	if m.Links == 0 {
		return ""
	}
	return fmt.Sprintf(" | mux links=%d level=%d level_changes=%d window=%s link=%s/s binlog recoded=%d restored=%d stream_window=%s", m.Links, m.Level, m.LevelChanges,
		FormatSize(int64(m.Window)), human(m.LinkRate), m.BinlogSent, m.BinlogRestored, FormatSize(m.StreamWindow))
}

func human(n int64) string {
	switch {
	case n >= 10<<30:
		return fmt.Sprintf("%.1fGiB", float64(n)/(1<<30))
	case n >= 10<<20:
		return fmt.Sprintf("%.1fMiB", float64(n)/(1<<20))
	case n >= 10<<10:
		return fmt.Sprintf("%.1fKiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%dB", n)
}

type dirCounters struct {
	raw, wire, rawFrames, zstdFrames atomic.Int64
}

func (d *dirCounters) frame(typ frameType, raw, wire int) {
	d.raw.Add(int64(raw))
	d.wire.Add(int64(wire))
	if typ.isZstd() {
		d.zstdFrames.Add(1)
	} else if typ == frameRaw {
		d.rawFrames.Add(1)
	}
}

func (d *dirCounters) load() DirStats {
	return DirStats{RawBytes: d.raw.Load(), WireBytes: d.wire.Load(), RawFrames: d.rawFrames.Load(), ZstdFrames: d.zstdFrames.Load()}
}

// counters are shared by all connections of a tunnel end.
type counters struct {
	conns, active, failed, corrupt atomic.Int64
	send, recv                     dirCounters
	flushSize, flushTimeout        atomic.Int64
	flushIdle, flushInline         atomic.Int64
	switches                       atomic.Int64
	level, levelChanges, window    atomic.Int64 // zstd level and window last used
	linkRate                       atomic.Int64 // bytes/s, the level policy's drain rate
	wans                           atomic.Int64 // mux links opened (entry) or accepted (exit)
	binlogSent, binlogRestored     atomic.Int64 // binlog event packets recoded, restored
	binlogPassed                   atomic.Int64 // binlog dump packets sent as they came
	streamWindow                   atomic.Int64 // largest stream window granted, bytes
	queued, clear                  atomic.Int64
	rtt, minRTT, notsent           atomic.Int64 // last probe sample; ns, ns, bytes
	linksOpen                      atomic.Int64 // mux links open now
	resets, creditStalls           atomic.Int64
	tlsRefused                     atomic.Int64
	faults                         faultCounters
}

// faultCounters are FaultStats, counted where each fault is caught.
type faultCounters struct {
	frameChecks, recordTags, binlogEvents atomic.Int64
}

func (f *faultCounters) load() FaultStats {
	return FaultStats{FrameCheckFailures: f.frameChecks.Load(), RecordTagFailures: f.recordTags.Load(),
		BinlogEventErrors: f.binlogEvents.Load()}
}

func (c *counters) probed(q queueSample, queued bool) {
	if queued {
		c.queued.Add(1)
	} else {
		c.clear.Add(1)
	}
	c.rtt.Store(int64(q.srtt))
	c.minRTT.Store(int64(q.minRTT))
	c.notsent.Store(q.notsent)
}

// windowGranted keeps the largest stream window granted.
func (c *counters) windowGranted(w int) {
	for {
		cur := c.streamWindow.Load()
		if int64(w) <= cur || c.streamWindow.CompareAndSwap(cur, int64(w)) {
			return
		}
	}
}

func (c *counters) snapshot(role Role) Stats {
	return Stats{
		Role: role, Conns: c.conns.Load(), ActiveConns: c.active.Load(), Failed: c.failed.Load(),
		Corrupt: c.corrupt.Load(), Send: c.send.load(), Recv: c.recv.load(),
		Flush: FlushStats{Size: c.flushSize.Load(), Timeout: c.flushTimeout.Load(), Idle: c.flushIdle.Load(),
			Inline: c.flushInline.Load()},
		AutoSwitches: c.switches.Load(),
		Mux: MuxStats{Links: c.wans.Load(), Level: int(c.level.Load()), LevelChanges: c.levelChanges.Load(),
			Window: int(c.window.Load()), LinkRate: c.linkRate.Load(),
			BinlogSent: c.binlogSent.Load(), BinlogRestored: c.binlogRestored.Load(), BinlogPassed: c.binlogPassed.Load(),
			StreamWindow: c.streamWindow.Load(), LinksOpen: c.linksOpen.Load(), CreditStalls: c.creditStalls.Load()},
		StreamResets: c.resets.Load(), TLSRefused: c.tlsRefused.Load(), Faults: c.faults.load(),
		Probe: ProbeStats{Queued: c.queued.Load(), Clear: c.clear.Load(), RTT: time.Duration(c.rtt.Load()),
			MinRTT: time.Duration(c.minRTT.Load()), Notsent: c.notsent.Load()},
	}
}
