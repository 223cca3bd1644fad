package result

// LabCost is what the lab's own machinery cost during a point, so a figure the lab paid for
// is not blamed on the network or the server: today the user-space delay line, where a
// link's delay, jitter or loss needs one (the kernel's netem costs no process). Nil on
// points without a delay line.
type LabCost struct {
	// Host is where the delay line ran: "" on this machine (the namespace lab, whose cores
	// both sides share), else the inventory's name of the client host that ran it
	// (--hosts), whose cores only its client side shares.
	Host string `json:"host,omitempty"`
	// DelayLineCPUS is the delayer process's CPU over the point, all of it.
	DelayLineCPUS float64 `json:"delay_line_cpu_s"`
	// DelayLineOwnCPUS is the part of DelayLineCPUS charged to the lab, the figure
	// MachineShare and LabBound are decided on: all of it, since nothing in it is measured
	// to be work the sender would do without a delay line. Results written before the
	// whole was charged subtracted an estimate of delivery here (SubtractedCPUS).
	DelayLineOwnCPUS float64 `json:"delay_line_own_cpu_s"`
	// VerdictCPUS is the part of DelayLineCPUS its accepting verdict writes took (the
	// timed sample, scaled by DelayLineAccepted): the netlink system call with the kernel's
	// forwarding of the packets into the receiving stack inside it, which user space cannot
	// split. Shown, not subtracted; 0 in results written before it was recorded.
	VerdictCPUS float64 `json:"delay_line_verdict_cpu_s,omitempty"`
	// DelayLinePackets are the packets the delay line received, dropped ones too;
	// DelayLineAccepted those it released.
	DelayLinePackets  int64 `json:"delay_line_packets"`
	DelayLineAccepted int64 `json:"delay_line_accepted,omitempty"`
	// OwnUsPerPacket is DelayLineOwnCPUS per packet received.
	OwnUsPerPacket float64 `json:"delay_line_own_us_per_packet"`
	// MachineShare is DelayLineOwnCPUS as a share of the cores of the machine it ran on
	// (Cores of them; 0 in results written before they were recorded) over the point.
	MachineShare float64 `json:"machine_share"`
	Cores        int     `json:"cores,omitempty"`
	// LabBound: MachineShare above LabBoundShare; the point's CPU verdict then names the lab.
	LabBound bool `json:"lab_bound,omitempty"`
	// CPUHold is the delay line's own request to keep its machine's CPUs awake as its
	// stats recorded it at the end of the point; nil where not recorded (older results).
	CPUHold *CPUHold `json:"delay_line_cpu_hold,omitempty"`
	// The delay line's own fidelity over the point: how late a release's head packet left
	// after its due time, on average and at the 99th percentile (an upper bound: the
	// bound of its histogram bucket; -1 above 5 ms). A round trip adds two of these.
	ReleaseLateMeanUs float64 `json:"release_late_mean_us"`
	ReleaseLateP99Us  float64 `json:"release_late_p99_us"`
}

// CPUHold is how a request to keep the CPUs out of deep idle states (0 µs on
// /dev/cpu_dma_latency, cpuidle.Keep) went: held, or the error that stopped it.
type CPUHold struct {
	Held  bool   `json:"held"`
	Error string `json:"error,omitempty"`
}

// LabBoundShare is the share of the machine above which the lab's own cost is said to bound
// a point: beyond a tenth of the cores, a CPU-bound figure is as much the lab's as the
// database's.
const LabBoundShare = 0.10

// IsLabBound is the one rule for LabBound: the delay line's charged CPU took more than
// LabBoundShare of the machine it ran on.
func IsLabBound(share float64) bool { return share > LabBoundShare }

// SubtractedCPUS is what was left out of DelayLineCPUS as delivery the sender pays
// anyway: 0 in results that charge the whole, the estimate older results subtracted.
func (c LabCost) SubtractedCPUS() float64 { return max(c.DelayLineCPUS-c.DelayLineOwnCPUS, 0) }

// WholeShare is all of the delay line's CPU as a share of the machine: MachineShare where
// nothing was subtracted, else MachineShare scaled up by what was (0 when an older result
// charged nothing at all and the share cannot be recovered).
func (c LabCost) WholeShare() float64 {
	if c.SubtractedCPUS() == 0 {
		return c.MachineShare
	}
	if c.DelayLineOwnCPUS <= 0 {
		return 0
	}
	return c.MachineShare * c.DelayLineCPUS / c.DelayLineOwnCPUS
}

// WholeUsPerPacket is all of the delay line's CPU per packet received, µs.
func (c LabCost) WholeUsPerPacket() float64 {
	if c.DelayLinePackets <= 0 {
		return 0
	}
	return c.DelayLineCPUS * 1e6 / float64(c.DelayLinePackets)
}

// VerdictUsPerPacket is VerdictCPUS per packet released, µs; 0 where not recorded.
func (c LabCost) VerdictUsPerPacket() float64 {
	if c.DelayLineAccepted <= 0 {
		return 0
	}
	return c.VerdictCPUS * 1e6 / float64(c.DelayLineAccepted)
}
