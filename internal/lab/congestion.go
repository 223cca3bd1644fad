package lab

import (
	"fmt"
	"slices"
	"strings"

	"github.com/wirelab/wirelab/internal/procfs"
)

// LabCongestion is the congestion control the lab's hosts use when none is asked for:
// cubic, the default of the kernel's own configuration and of Linux distributions, where a
// database server usually runs. The lab machine's own default is the lab box's choice, not
// the user's servers' (this kind of box defaults to bbr, which without the fq qdisc paces
// a reply of several segments over part of a delayed round trip).
const LabCongestion = "cubic"

// KernelCongestion asks for the kernel's own default congestion control.
const KernelCongestion = "kernel"

// CongestionForm is how --tcp-congestion is spelled, for flag help and errors.
const CongestionForm = `a congestion control this kernel has (/proc/sys/net/ipv4/tcp_available_congestion_control), e.g. cubic or bbr; ` +
	`"kernel" = this kernel's default; unset = ` + LabCongestion + ` where the kernel has it`

// The kernel's sysctls: the congestion controls it has, and its default, which a new
// network namespace inherits.
const (
	availableCongestion = "net.ipv4.tcp_available_congestion_control"
	defaultCongestion   = "net.ipv4.tcp_congestion_control"
)

// CheckCongestion refuses a congestion control the kernel does not have, naming the ones
// it has; "" (the lab's default) and "kernel" are always accepted. It reads only proc, so
// callers run it before anything is created.
func CheckCongestion(proc procfs.FS, name string) error {
	_, err := ResolveCongestion(proc, name)
	return err
}

// ResolveCongestion names the congestion control the lab's hosts get for what was asked:
// "" is LabCongestion where the kernel has it and the kernel's default where it does not;
// "kernel" is the kernel's default; any other name is itself, if the kernel has it (else
// an error naming the flag and what the kernel has). It returns "" only when the kernel's
// default was wanted and cannot be read: the routes then carry no congestion control of
// their own.
func ResolveCongestion(proc procfs.FS, asked string) (string, error) {
	if asked == KernelCongestion {
		return kernelCongestion(proc), nil
	}
	list, err := proc.Sysctl(availableCongestion)
	have := strings.Fields(list)
	switch {
	case asked == "" && err == nil && slices.Contains(have, LabCongestion):
		return LabCongestion, nil
	case asked == "":
		return kernelCongestion(proc), nil
	case err != nil:
		return "", fmt.Errorf("--tcp-congestion %s: cannot list this kernel's congestion controls: %w", asked, err)
	case !slices.Contains(have, asked):
		return "", fmt.Errorf("--tcp-congestion %q: this kernel has %s; want one of them, %q for its default, or leave it unset for %s",
			asked, strings.Join(have, ", "), KernelCongestion, LabCongestion)
	}
	return asked, nil
}

// Congestion is the congestion control the lab's connections use: the one it set on its
// routes, or for a lab whose state names none, the kernel's default ("" when it cannot be
// read).
func (l *Lab) Congestion() string {
	if l.State.Congestion != "" {
		return l.State.Congestion
	}
	return kernelCongestion(l.proc)
}

func kernelCongestion(proc procfs.FS) string {
	name, err := proc.Sysctl(defaultCongestion)
	if err != nil {
		return ""
	}
	return name
}

// routeCongestion is the tail of a host's default route that picks its congestion
// control: per route (RTAX_CC_ALGO), because a namespace's default may be set only to one
// the host allows to unprivileged users, while a route may name any the kernel has.
func routeCongestion(name string) []string {
	if name == "" {
		return nil
	}
	return []string{"congctl", name}
}
