package metrics

import (
	"fmt"

	wlink "github.com/wirelab/wirelab/internal/link"
)

// Thresholds of the bottleneck verdict.
const (
	// NetSaturated is the link utilisation from which the wire is the bottleneck. HTB
	// rarely shows 100%: framing and ramp-up keep a saturated link a few percent short.
	NetSaturated = 0.9
	// CPUSideSaturated is the share of all cores one side must use to be CPU-bound alone.
	CPUSideSaturated = 0.8
	// CPUMachineSaturated is the share of all cores busy from which the machine is full and
	// the larger consumer is blamed.
	CPUMachineSaturated = 0.9
)

// VerdictInput is what a benchmark point measured.
type VerdictInput struct {
	UpUtil, DownUtil               float64 // bytes/s*8 ÷ configured rate; 0 when unlimited
	CPUServer, CPUClient, CPUTotal float64 // cores
	CPUs                           int     // cores on the machine; <= 0 = unknown
	// ServerCPUs and ClientCPUs are each side's own host's cores when client and server
	// run on separate hosts (both > 0); CPUs and CPUTotal are then the server host's.
	ServerCPUs, ClientCPUs int
	RateBps                int64 // configured link rate, only for the explanation
	// ServerCPUUnknown: the server is not wirelab's (an existing server), so CPUServer is
	// not a reading, and CPUTotal holds its CPU only when it runs on this machine.
	ServerCPUUnknown bool
	// LabBound: the lab's own machinery (the delay line) used more than a tenth of the
	// machine (result.LabBoundShare), LabShare of it; a CPU verdict then names the lab.
	LabBound bool
	LabShare float64
	// LabOnClientHost: the delay line ran on the client's own host (real hosts), so only
	// the client side's CPU verdict can be the lab's.
	LabOnClientHost bool
}

// LabBound is the verdict where the machine's CPU limited the point and the lab's own
// delay line took a large part of it: the figure says as much about the lab as about the
// database, and predict does not carry it to other machines as the server's.
const LabBound = "lab"

// LatencyOrServer is the verdict where nothing wirelab sees is saturated but the server's
// CPU is not measured: round trips or the server itself set the pace.
const LatencyOrServer = "latency-or-server"

// Utilization is a direction's share of the link: bytesPerS*8 / rateBps, 0 when the
// link is unlimited (rateBps <= 0).
func Utilization(bytesPerS float64, rateBps int64) float64 {
	if rateBps <= 0 {
		return 0
	}
	return bytesPerS * 8 / float64(rateBps)
}

// Verdict names what limited a benchmark point, and why in numbers:
//
//   - "network" when either direction uses >= NetSaturated (0.9) of the link rate. It
//     wins over CPU: a full link is the cause, busy CPUs are then spinning on it.
//   - "server-cpu" / "client-cpu" when that side is CPU-bound. Client and server share
//     the machine's cores (2 on the reference box), so a side is CPU-bound when it alone
//     uses >= CPUSideSaturated (0.8) of all cores, or when the machine as a whole is
//     >= CPUMachineSaturated (0.9) busy and that side is the larger of the two consumers:
//     mysqld 1.0 + sysbench 0.85 on 2 cores starves both, and mysqld is blamed. If both
//     qualify, the larger consumer is named.
//   - "latency" otherwise: nothing is saturated, so round trips set the pace.
//   - "lab" instead of a CPU verdict when the lab's own delay line used more than a tenth
//     of the machine (LabBound); where it ran on the client's own host, instead of
//     "client-cpu" only.
//
// On separate hosts (ServerCPUs and ClientCPUs set) each side is weighed against its own
// host's cores: a side is CPU-bound when it uses >= CPUSideSaturated of them, and the
// server also when its host as a whole (CPUTotal) is >= CPUMachineSaturated busy; when
// both are, the side using the larger share of its own host is named.
//
// With CPUs unknown (<= 0) no CPU verdict is given. With the server's CPU unknown (an
// existing server) "server-cpu" is never given and "latency" becomes LatencyOrServer; the
// client is CPU-bound when it alone uses >= CPUSideSaturated of the cores, or is the larger
// part of a machine >= CPUMachineSaturated busy.
func Verdict(in VerdictInput) (string, string) {
	v, w := cpuVerdict(in)
	switch {
	case in.LabBound && in.LabOnClientHost && v == "client-cpu":
		return LabBound, fmt.Sprintf("the lab's delay line used %.0f%% of the client's host; %s", 100*in.LabShare, w)
	case in.LabBound && !in.LabOnClientHost && (v == "server-cpu" || v == "client-cpu"):
		return LabBound, fmt.Sprintf("the lab's delay line used %.0f%% of the machine; %s", 100*in.LabShare, w)
	}
	return v, w
}

func cpuVerdict(in VerdictInput) (string, string) {
	lk := "the link rate"
	if in.RateBps > 0 {
		lk = wlink.FormatRate(in.RateBps)
	}
	if in.UpUtil >= NetSaturated || in.DownUtil >= NetSaturated {
		dir, u, other, ou := "up", in.UpUtil, "down", in.DownUtil
		if in.DownUtil > in.UpUtil {
			dir, u, other, ou = "down", in.DownUtil, "up", in.UpUtil
		}
		return "network", fmt.Sprintf("%s %.2f of %s (%s %.2f)", dir, u, lk, other, ou)
	}
	netWhy := fmt.Sprintf("up %.2f, down %.2f of %s", in.UpUtil, in.DownUtil, lk)
	if in.UpUtil == 0 && in.DownUtil == 0 && in.RateBps <= 0 {
		netWhy = "link unlimited"
	}
	if in.ServerCPUs > 0 && in.ClientCPUs > 0 {
		return separateVerdict(in, netWhy)
	}
	if in.CPUs <= 0 {
		return "latency", netWhy + "; cpu count unknown"
	}
	n := float64(in.CPUs)
	cores := fmt.Sprintf("%d cores", in.CPUs)
	if in.ServerCPUUnknown {
		return unknownServerVerdict(in, netWhy, cores)
	}
	serverBig := in.CPUServer >= in.CPUClient
	server := in.CPUServer >= CPUSideSaturated*n
	client := in.CPUClient >= CPUSideSaturated*n
	if server || client {
		if server && (serverBig || !client) {
			return "server-cpu", fmt.Sprintf("server %.2f of %s", in.CPUServer, cores)
		}
		return "client-cpu", fmt.Sprintf("client %.2f of %s", in.CPUClient, cores)
	}
	if in.CPUTotal >= CPUMachineSaturated*n {
		if serverBig {
			return "server-cpu", fmt.Sprintf("machine %.2f of %s busy; server %.2f > client %.2f",
				in.CPUTotal, cores, in.CPUServer, in.CPUClient)
		}
		return "client-cpu", fmt.Sprintf("machine %.2f of %s busy; client %.2f > server %.2f",
			in.CPUTotal, cores, in.CPUClient, in.CPUServer)
	}
	return "latency", fmt.Sprintf("%s; server %.2f, client %.2f, machine %.2f of %s",
		netWhy, in.CPUServer, in.CPUClient, in.CPUTotal, cores)
}

// unknownServerVerdict is Verdict's CPU part when the server's CPU is not measured: only
// the client's CPU is known, the rest of a busy machine may be the server or the kernel.
func unknownServerVerdict(in VerdictInput, netWhy, cores string) (string, string) {
	n := float64(in.CPUs)
	const unseen = "server CPU not measured (external server)"
	rest := in.CPUTotal - in.CPUClient
	switch {
	case in.CPUClient >= CPUSideSaturated*n:
		return "client-cpu", fmt.Sprintf("client %.2f of %s; %s", in.CPUClient, cores, unseen)
	case in.CPUTotal >= CPUMachineSaturated*n && in.CPUClient >= rest:
		return "client-cpu", fmt.Sprintf("machine %.2f of %s busy; client %.2f >= the rest %.2f; %s",
			in.CPUTotal, cores, in.CPUClient, rest, unseen)
	}
	return LatencyOrServer, fmt.Sprintf("%s; client %.2f, machine %.2f of %s; %s: round trips or the server set the pace",
		netWhy, in.CPUClient, in.CPUTotal, cores, unseen)
}

// separateVerdict is Verdict's CPU part when client and server have hosts of their own:
// each side against its own host's cores. CPUTotal is the server host's busy CPU.
func separateVerdict(in VerdictInput, netWhy string) (string, string) {
	sn, cn := float64(in.ServerCPUs), float64(in.ClientCPUs)
	sCores, cCores := fmt.Sprintf("%d server-host cores", in.ServerCPUs), fmt.Sprintf("%d client-host cores", in.ClientCPUs)
	client := in.CPUClient >= CPUSideSaturated*cn
	if in.ServerCPUUnknown {
		if client {
			return "client-cpu", fmt.Sprintf("client %.2f of %s; server CPU not measured (external server)", in.CPUClient, cCores)
		}
		return LatencyOrServer, fmt.Sprintf("%s; client %.2f of %s; server CPU not measured (external server): round trips or the server set the pace",
			netWhy, in.CPUClient, cCores)
	}
	serverOwn := in.CPUServer >= CPUSideSaturated*sn
	serverHost := in.CPUTotal >= CPUMachineSaturated*sn
	server := serverOwn || serverHost
	serverShare := max(in.CPUServer/sn, in.CPUTotal/sn)
	switch {
	case server && (!client || serverShare >= in.CPUClient/cn):
		if serverOwn {
			return "server-cpu", fmt.Sprintf("server %.2f of %s (client %.2f of %s)", in.CPUServer, sCores, in.CPUClient, cCores)
		}
		return "server-cpu", fmt.Sprintf("server host %.2f of %s busy, the server %.2f (client %.2f of %s)",
			in.CPUTotal, sCores, in.CPUServer, in.CPUClient, cCores)
	case client:
		return "client-cpu", fmt.Sprintf("client %.2f of %s (server %.2f of %s)", in.CPUClient, cCores, in.CPUServer, sCores)
	}
	return "latency", fmt.Sprintf("%s; server %.2f, server host %.2f of %s; client %.2f of %s",
		netWhy, in.CPUServer, in.CPUTotal, sCores, in.CPUClient, cCores)
}
