package result

// LabCost is what the lab's own machinery cost during a point, so a figure the lab paid for
// is not blamed on the network or the server: today the user-space delay line, where a
// link's delay, jitter or loss needs one (the kernel's netem costs no process). Nil on
// points without a delay line.
type LabCost struct {
	// The delayer process's CPU over the point, and the part of it that was its own: less
	// the delivery of released packets into the receiving host's stack, which the sender
	// pays without a delay line.
	DelayLineCPUS    float64 `json:"delay_line_cpu_s"`
	DelayLineOwnCPUS float64 `json:"delay_line_own_cpu_s"`
	DelayLinePackets int64   `json:"delay_line_packets"`
	OwnUsPerPacket   float64 `json:"delay_line_own_us_per_packet"`
	// MachineShare is the own CPU as a share of the machine's cores over the point.
	MachineShare float64 `json:"machine_share"`
	// LabBound: MachineShare above LabBoundShare; the point's CPU verdict then names the lab.
	LabBound bool `json:"lab_bound,omitempty"`
	// The delay line's own fidelity over the point: how late a release's head packet left
	// after its due time, on average and at the 99th percentile (an upper bound: the
	// bound of its histogram bucket; -1 above 5 ms). A round trip adds two of these.
	ReleaseLateMeanUs float64 `json:"release_late_mean_us"`
	ReleaseLateP99Us  float64 `json:"release_late_p99_us"`
}

// LabBoundShare is the share of the machine above which the lab's own cost is said to bound
// a point: beyond a tenth of the cores, a CPU-bound figure is as much the lab's as the
// database's.
const LabBoundShare = 0.10
