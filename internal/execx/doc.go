// Package execx runs external commands (ip, tc, iptables, mariadbd, sysbench) behind a
// small Runner interface, so kernel-facing code can be tested from recorded fixtures
// without root and without touching the machine.
package execx
