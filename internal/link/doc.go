// Package link describes and applies the condition of the lab's wire: bandwidth (HTB),
// delay, jitter and loss (netem where the kernel has it, an NFQUEUE delayer where it does
// not), and verifies with real tools (iperf3, TCP and UDP echo probes) that the wire is what
// was asked. A Shaper names how a condition is made (shapername.go) and Supports is the one
// rule of what a kernel can make (detect.go); the makers are plug-ins behind a small
// interface, in an explicit registry (shaper.go); Apply and Clear are the entry points the
// lab calls.
package link
