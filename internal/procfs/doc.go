// Package procfs reads a Linux machine's /proc: every /proc file wirelab reads goes through
// an FS, a root and a way to read a file under it. The command sets the root (the machine's
// /proc, or a fixture tree in a test) and a real host's /proc is read over SSH through the
// same parsers with the host's own file reader. It owns the parsers of the files more than
// one package reads: /proc/<pid>/stat (state, parent, CPU ticks, start time), loadavg,
// mountinfo and the sysctls.
package procfs
