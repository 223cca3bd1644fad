package cli

import (
	"fmt"
	"runtime"

	"github.com/wirelab/wirelab/internal/hostinfo"
)

// cmdAgentFacts prints the host's facts (cores, CPU model, memory, kernel, clock source)
// as one JSON line: what wirelab records of each remote host and weighs its verdicts by.
func cmdAgentFacts(p *Process, args []string) error {
	fs := newFlagSet(p, "agent facts", "internal: print this host's cores, CPU model, memory, kernel and clock source as JSON",
		"wirelab agent facts")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	h, err := hostinfo.Read(hostinfo.Paths{Proc: p.procRoot(), Sys: hostinfo.System.Sys}, runtime.NumCPU())
	if err != nil {
		return fmt.Errorf("agent facts: %w", err)
	}
	b, err := hostinfo.Marshal(h)
	if err != nil {
		return fmt.Errorf("agent facts: %w", err)
	}
	_, err = p.Stdout.Write(b)
	return err
}
