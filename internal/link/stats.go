package link

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/wirelab/wirelab/internal/result"
)

// QueueStats are the counters of one delay line. Every packet the delayer could not delay is
// counted here; nothing fails open silently.
type QueueStats struct {
	Queue            uint16 `json:"queue"`
	Received         int64  `json:"received"`          // packets handed to the delayer
	Delayed          int64  `json:"delayed"`           // accepted at their release time
	LossDropped      int64  `json:"loss_dropped"`      // dropped on purpose (--loss)
	OverflowDropped  int64  `json:"overflow_dropped"`  // delay line full: tail-dropped
	OverflowAccepted int64  `json:"overflow_accepted"` // delay line full: passed undelayed
	FlushedAtExit    int64  `json:"flushed_at_exit"`   // released early when the delayer stopped
	VerdictErrors    int64  `json:"verdict_errors"`
	RecvErrors       int64  `json:"recv_errors"`
	KernelDropped    int64  `json:"kernel_dropped"`      // kernel queue full (queue_dropped)
	KernelUserDrop   int64  `json:"kernel_user_dropped"` // netlink socket full (user_dropped)
	Held             int64  `json:"held"`                // packets in the delay line now
	MaxHeld          int64  `json:"max_held"`
	KernelStamped    int64  `json:"kernel_stamped"` // arrivals timed by the kernel's timestamp
}

// Undelayed is the count of packets that did not get the asked delay: lost to a full queue or
// socket, or passed early.
func (q QueueStats) Undelayed() int64 {
	return q.OverflowDropped + q.OverflowAccepted + q.KernelDropped + q.KernelUserDrop + q.VerdictErrors
}

// DelayerStats is what the delayer writes to its stats file, about once a second.
type DelayerStats struct {
	Updated time.Time    `json:"updated"`
	Pid     int          `json:"pid"`
	Delay   string       `json:"delay"`
	Jitter  string       `json:"jitter"`
	LossPct float64      `json:"loss_pct"`
	Queues  []QueueStats `json:"queues"`
	// The delayer process's own cost since Since: CPU time (user + system, getrusage) and
	// the delay loop's wake-ups, spins before a release, and batch verdicts; EarlyUs is how
	// long before a release the loop now wakes (its learned wake-up lateness).
	Since   time.Time `json:"since"`
	CPUNs   int64     `json:"cpu_ns"`
	Wakeups int64     `json:"wakeups"`
	Spins   int64     `json:"spins"`
	Batches int64     `json:"batches"`
	EarlyUs float64   `json:"early_us"`
	// A sample of the verdicts that accept released packets, timed in the loop thread's
	// CPU, and the packets they accepted: the whole verdict write, the netlink system call
	// and the kernel's forwarding of the packets into the receiving stack inside it (see
	// DelayerCost.Verdicts).
	VerdictSampledNs      int64 `json:"deliver_sampled_ns"`
	VerdictSampledPackets int64 `json:"deliver_sampled_packets"`
	// CPUHold is the delayer's request to keep the CPUs awake (DelayerConfig.CPUIdle) as it
	// went; nil when it was not asked to hold.
	CPUHold *result.CPUHold `json:"cpu_hold,omitempty"`
	// The delay line's own fidelity: how late each release's head packet left after its
	// due time (arrival + delay), as counts per LateBoundsUs bucket (the last one: above
	// the largest bound) and their sum. The packets released with a head leave up to the
	// slack early; the head never does.
	HeadLate      []int64 `json:"head_late_counts,omitempty"`
	HeadLateSumNs int64   `json:"head_late_sum_ns"`
}

// LateBoundsUs are the upper bounds, in µs, of the release-lateness buckets.
var LateBoundsUs = [...]int64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000}

// Packets is the number of packets the delayer has received on all queues.
func (s DelayerStats) Packets() int64 {
	var n int64
	for _, q := range s.Queues {
		n += q.Received
	}
	return n
}

// Accepted is the number of packets the delayer has released on all queues with a batch
// verdict: at their release time, or early when it stopped. Packets dropped (--loss, a
// full delay line) or passed undelayed on overflow are not among them.
func (s DelayerStats) Accepted() int64 {
	var n int64
	for _, q := range s.Queues {
		n += q.Delayed + q.FlushedAtExit
	}
	return n
}

// Undelayed sums Undelayed over the queues.
func (s DelayerStats) Undelayed() int64 {
	var n int64
	for _, q := range s.Queues {
		n += q.Undelayed()
	}
	return n
}

// DelayerFiles are where the delayer of wire w keeps its pid, log and stats. Names carry the
// namespace so labs sharing one state directory do not collide.
func DelayerFiles(w Wire) (pid, log, stats string) {
	base := filepath.Join(w.StateDir, "delayer-"+w.NS)
	return base + ".pid", base + ".log", base + ".json"
}

// WriteDelayerStats replaces path atomically, so readers never see half a file.
func WriteDelayerStats(path string, s DelayerStats) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("encode delayer stats: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("write delayer stats: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write delayer stats: %w", err)
	}
	return nil
}

// ReadDelayerStats reads a stats file written by the delayer.
func ReadDelayerStats(path string) (DelayerStats, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return DelayerStats{}, fmt.Errorf("read delayer stats: %w", err)
	}
	return ParseDelayerStats(path, b)
}

// ParseDelayerStats decodes the content b of the delayer's stats file at path (on this
// machine or, read over SSH, on another).
func ParseDelayerStats(path string, b []byte) (DelayerStats, error) {
	var s DelayerStats
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("decode delayer stats %s: %w", path, err)
	}
	return s, nil
}

// KernelQueue is one line of /proc/net/netfilter/nfnetlink_queue.
type KernelQueue struct {
	Queue        uint16
	Total        int64 // packets waiting for a verdict
	QueueDropped int64 // queue full
	UserDropped  int64 // netlink socket full
}

// ParseNfnetlinkQueue parses /proc/net/netfilter/nfnetlink_queue: queue_number peer_portid
// queue_total copy_mode copy_range queue_dropped user_dropped id_sequence 1.
func ParseNfnetlinkQueue(b []byte) (map[uint16]KernelQueue, error) {
	out := map[uint16]KernelQueue{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) < 8 {
			return nil, fmt.Errorf("parse nfnetlink_queue line %q: want at least 8 fields", sc.Text())
		}
		var v [8]int64
		for _, i := range []int{0, 2, 5, 6} {
			n, err := strconv.ParseInt(f[i], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("parse nfnetlink_queue line %q: %w", sc.Text(), err)
			}
			v[i] = n
		}
		q := uint16(v[0])
		out[q] = KernelQueue{Queue: q, Total: v[2], QueueDropped: v[5], UserDropped: v[6]}
	}
	return out, sc.Err()
}

// DelayerCost is what the delay line cost between two of its stats snapshots.
//
// CPU is all of it, and all of it is charged to the lab: nothing in it is measured to be
// work the sender would do without a delay line. Verdicts is the part spent in the
// verdict writes that accept released packets, from the timed sample, shown beside it:
// one write(2) in which the kernel parses the netlink message, finds and frees the
// batch's queue entries, runs the rest of the netfilter hooks and forwards each packet
// into the receiving host's stack. Only the last of these is the sender's work without a
// delay line, and a thread's CPU clock cannot tell it from the rest.
type DelayerCost struct {
	Elapsed time.Duration // between the snapshots, by the delayer's own clock
	CPU     time.Duration // the delayer process's CPU (user + system)
	// Verdicts is the sampled verdict writes' CPU per packet they accepted, times the
	// packets accepted (at most CPU); 0 without a sample.
	Verdicts time.Duration
	Packets  int64 // received: every packet the delay line handled, dropped ones too
	Accepted int64 // released with a batch verdict (DelayerStats.Accepted)
	// Releases and the lateness of their head packets over the interval (HeadLate's
	// buckets); LateSum is their total.
	Releases int64
	Late     []int64
	LateSum  time.Duration
}

// CostBetween is the delay line's cost from before to after. ok is false when the two
// snapshots are not of one delayer (it was restarted) or not in order.
func CostBetween(before, after DelayerStats) (c DelayerCost, ok bool) {
	if before.Pid != after.Pid || !after.Updated.After(before.Updated) || after.CPUNs < before.CPUNs {
		return c, false
	}
	c = DelayerCost{Elapsed: after.Updated.Sub(before.Updated), CPU: time.Duration(after.CPUNs - before.CPUNs),
		Packets: after.Packets() - before.Packets(), Accepted: after.Accepted() - before.Accepted()}
	if len(after.HeadLate) == len(LateBoundsUs)+1 {
		c.Late = make([]int64, len(after.HeadLate))
		for i, n := range after.HeadLate {
			if i < len(before.HeadLate) {
				n -= before.HeadLate[i]
			}
			c.Late[i] = n
			c.Releases += n
		}
		c.LateSum = time.Duration(after.HeadLateSumNs - before.HeadLateSumNs)
	}
	// The sample is one accepting verdict in verdictSampleEvery: scaled by the packets such
	// verdicts accepted, not by those received (a dropped packet's verdict accepts nothing
	// and is not in the sample).
	if n := after.VerdictSampledPackets - before.VerdictSampledPackets; n > 0 && c.Accepted > 0 {
		perPkt := float64(after.VerdictSampledNs-before.VerdictSampledNs) / float64(n)
		c.Verdicts = min(time.Duration(perPkt*float64(c.Accepted)), c.CPU)
	}
	return c, true
}

// PerPacket is CPU per packet received; 0 without packets.
func (c DelayerCost) PerPacket() time.Duration {
	if c.Packets <= 0 {
		return 0
	}
	return c.CPU / time.Duration(c.Packets)
}

// VerdictsPerPacket is Verdicts per packet accepted; 0 without packets.
func (c DelayerCost) VerdictsPerPacket() time.Duration {
	if c.Accepted <= 0 {
		return 0
	}
	return c.Verdicts / time.Duration(c.Accepted)
}

// MachineShare is CPU as a share of what the machine's cores could do over Elapsed.
func (c DelayerCost) MachineShare(cores int) float64 {
	if cores <= 0 || c.Elapsed <= 0 {
		return 0
	}
	return c.CPU.Seconds() / (float64(cores) * c.Elapsed.Seconds())
}

// LateMean is the head packets' average lateness; 0 without releases.
func (c DelayerCost) LateMean() time.Duration {
	if c.Releases <= 0 {
		return 0
	}
	return c.LateSum / time.Duration(c.Releases)
}

// LateQuantile is the bound of the bucket that holds the q-quantile of the head packets'
// lateness (an upper bound on it); -1 when it lies above the largest bound, 0 without
// releases.
func (c DelayerCost) LateQuantile(q float64) time.Duration {
	if c.Releases <= 0 {
		return 0
	}
	want, seen := int64(math.Ceil(q*float64(c.Releases))), int64(0)
	for i, n := range c.Late {
		if seen += n; seen >= want {
			if i == len(LateBoundsUs) {
				return -1
			}
			return time.Duration(LateBoundsUs[i]) * time.Microsecond
		}
	}
	return -1
}
