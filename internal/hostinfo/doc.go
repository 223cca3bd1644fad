// Package hostinfo reads what a machine is: its cores, CPU model, memory, kernel and
// clock source, from its /proc and /sys. wirelab reads its own machine with it in the
// namespace lab, and each remote host's agent (`wirelab agent facts`) reads its host with
// it, so a report says what each side ran on and verdicts weigh each side's own cores.
package hostinfo
