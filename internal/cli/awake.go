package cli

import (
	"flag"
	"fmt"

	"github.com/wirelab/wirelab/internal/cpuidle"
	"github.com/wirelab/wirelab/internal/lab"
)

func addAwakeFlag(fs *flag.FlagSet) *bool {
	return fs.Bool("keep-cpus-awake", true, "hold /dev/cpu_dma_latency at 0 while measuring, so an idle CPU wakes at once; "+
		"at 1-2 threads a VM's or C-state's wake-up otherwise outweighs the wire (=false: the OS's idle policy; "+
		"the userspace delayer, where a lab uses one, holds it regardless while it runs: its timing needs it)")
}

// addNoWaitFlag is how every measuring command (run, each study) says what to do when
// another measurement holds the machine.
func addNoWaitFlag(fs *flag.FlagSet) *bool {
	return fs.Bool("no-wait", false, "when another run or study is measuring on this machine, fail (naming it) instead of "+
		"waiting for it: one measurement at a time, or they measure each other")
}

// measureCommand is the name a measuring command goes by in locks and lab owners:
// "run", or "study NAME".
func measureCommand(study string) string {
	if study == "run" {
		return study
	}
	return "study " + study
}

// keepAwake holds the CPUs out of deep idle states when asked and says what it did, for the
// report. Failing to is not fatal (the measurement stands, with the OS's idle policy) but
// is printed and recorded. release is always safe to call.
func keepAwake(p *Process, asked bool) (desc string, release func()) {
	var h *cpuidle.Hold
	var err error
	if asked {
		if h, err = cpuidle.Keep(p.CPUIdle); err != nil {
			fmt.Fprintf(p.Stderr, "warning: %v; measuring with the OS's idle policy (recorded in the report)\n", err)
		}
	}
	desc = cpuidle.Describe(asked, h, err, cpuidle.Driver(p.CPUIdle))
	return desc, func() {
		if err := h.Release(); err != nil {
			p.Logger.Warn("release CPU latency request", "err", err)
		}
	}
}

// addCongestionFlag is the lab hosts' TCP congestion control, which every command that
// builds a lab takes.
func addCongestionFlag(fs *flag.FlagSet) *string {
	return fs.String("tcp-congestion", "", "the lab hosts' TCP congestion control, set on their routes: "+lab.CongestionForm+
		" (the default of Linux distributions, where database servers usually run; the report names the one used); "+
		"bbr paces a reply of several segments over time where cubic sends it at once, which lengthens a delayed round trip")
}

// checkCongestion refuses a congestion control the kernel lacks, and one asked for real
// hosts, whose own setting wirelab does not change.
func checkCongestion(p *Process, name string, hosts bool) error {
	if name != "" && hosts {
		return fmt.Errorf("--tcp-congestion %s: sets the namespace lab's hosts; with --hosts each host keeps its own (net.ipv4.tcp_congestion_control there): drop one of them", name)
	}
	return lab.CheckCongestion(p.proc(), name)
}
