// Package link describes and applies the condition of the lab's wire: bandwidth (HTB),
// delay, jitter and loss (netem where the kernel has it, an NFQUEUE delayer where it does
// not), and verifies with real tools (iperf3, TCP and UDP echo probes) that the wire is what
// was asked; readback.go compares a wire's qdiscs, classes and rules as the kernel reports
// them with the plan that made them. Shapers are plug-ins behind the Shaper interface, in
// an explicit registry (shaper.go); Apply and Clear are the entry points the lab calls.
package link
