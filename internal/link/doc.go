// Package link describes and applies the condition of the lab's wire: bandwidth (HTB),
// delay, jitter and loss (netem where the kernel has it, an NFQUEUE delayer where it does
// not), and verifies with real tools that the wire is what was asked.
package link
