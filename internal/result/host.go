package result

// Host is one machine a run measured on, as its own agent read it: results.json's
// environment.hosts. The namespace lab has one (client and server share this machine);
// a run over --hosts has one per inventory host.
type Host struct {
	// Role is what the host ran: "client", "server", "replica" (the replication study's
	// host across the wire, its client side), or SharedRole when client and server shared
	// it (the namespace lab).
	Role string `json:"role"`
	// Name is the inventory's name for the host ("this machine" in the lab).
	Name        string `json:"name"`
	Cores       int    `json:"cores"` // CPUs the host's processes may run on
	CPUModel    string `json:"cpu_model,omitempty"`
	MemoryBytes int64  `json:"memory_bytes,omitempty"`
	Kernel      string `json:"kernel,omitempty"`
	// ClockSource is the kernel's current clocksource (tsc, hpet, kvm-clock, ...): a slow
	// one makes every timestamp of the host, and so its latencies, costlier.
	ClockSource string `json:"clock_source,omitempty"`
}

// SharedRole is the role of a machine where client and server both ran.
const SharedRole = "client+server"

// Cores is how a run's CPUs were laid out: either one machine both sides shared
// (Shared > 0), or a server host and a client host of their own.
type Cores struct {
	Shared         int
	Server, Client int
}

// Separate is true when client and server had hosts of their own.
func (c Cores) Separate() bool { return c.Shared == 0 && c.Server > 0 && c.Client > 0 }

// Machine is the cores of the machine whose whole CPU a run measures: the shared one, or
// the server host on separate hosts.
func (c Cores) Machine() int {
	if c.Separate() {
		return c.Server
	}
	return c.Shared
}

// HostCores lays out hs: separate when a host has the role "server" and another the role
// "client" (or "replica": the client side of a replication run), each with a known core
// count (several client hosts count their cores together: their load drivers' CPU is
// summed too); otherwise the shared machine's cores (the first
// host's, 0 when hs is empty).
func HostCores(hs []Host) Cores {
	var c Cores
	for _, h := range hs {
		switch h.Role {
		case "server":
			c.Server = h.Cores
		case "client", "replica":
			c.Client += h.Cores
		}
	}
	if c.Server > 0 && c.Client > 0 {
		return c
	}
	if len(hs) > 0 {
		return Cores{Shared: hs[0].Cores}
	}
	return Cores{}
}

// HostWithRole is the first of hs with role, and whether there is one.
func HostWithRole(hs []Host, role string) (Host, bool) {
	for _, h := range hs {
		if h.Role == role {
			return h, true
		}
	}
	return Host{}, false
}
