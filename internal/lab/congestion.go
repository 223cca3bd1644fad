package lab

import (
	"fmt"
	"os"
	"slices"
	"strings"
)

// CongestionForm is how --tcp-congestion is spelled, for flag help and errors.
const CongestionForm = `a congestion control this kernel has (/proc/sys/net/ipv4/tcp_available_congestion_control), e.g. cubic or bbr; "" = the kernel's default`

// availableCongestion is where the kernel lists the congestion controls it has; a
// variable so tests can point it elsewhere.
var availableCongestion = "/proc/sys/net/ipv4/tcp_available_congestion_control"

// defaultCongestion is the kernel's default congestion control, which a new network
// namespace inherits.
var defaultCongestion = "/proc/sys/net/ipv4/tcp_congestion_control"

// CheckCongestion refuses a congestion control the kernel does not have, naming the ones
// it has; "" (the kernel's default) is always accepted. It reads only /proc, so callers
// run it before anything is created.
func CheckCongestion(name string) error {
	if name == "" {
		return nil
	}
	b, err := os.ReadFile(availableCongestion)
	if err != nil {
		return fmt.Errorf("--tcp-congestion %s: cannot list this kernel's congestion controls: %w", name, err)
	}
	have := strings.Fields(string(b))
	if !slices.Contains(have, name) {
		return fmt.Errorf("--tcp-congestion %q: this kernel has %s; want one of them, or \"\" for its default", name, strings.Join(have, ", "))
	}
	return nil
}

// Congestion is the congestion control the lab's connections use: the one asked for, or
// the kernel's default ("" when it cannot be read).
func Congestion(asked string) string {
	if asked != "" {
		return asked
	}
	b, err := os.ReadFile(defaultCongestion)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
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
