package cli

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"

	"github.com/wirelab/wirelab/internal/link"
)

// tools the lab runs, with the Debian package that has each.
var tools = []struct{ cmd, pkg string }{
	{"ip", "iproute2"}, {"tc", "iproute2"}, {"iptables", "iptables"}, {"ethtool", "ethtool"},
	{"mariadbd", "mariadb-server"}, {"mariadb-install-db", "mariadb-server"}, {"mariadb", "mariadb-client"},
	{"sysbench", "sysbench"}, {"iperf3", "iperf3"}, {"socat", "socat"},
}

func missingTools() []string {
	var miss []string
	for _, t := range tools {
		if _, err := exec.LookPath(t.cmd); err != nil {
			miss = append(miss, fmt.Sprintf("%s (Debian package %s)", t.cmd, t.pkg))
		}
	}
	return miss
}

// preflight checks, before anything is created, that the machine can build the lab the
// user asked for: tools present and the shaper the condition needs.
func preflight(p *Process, shaper link.Shaper, c link.Condition) error {
	if miss := missingTools(); len(miss) > 0 {
		return fmt.Errorf("missing tools: %s; run 'make deps' (or apt-get install them)", strings.Join(miss, ", "))
	}
	caps, err := link.Detect(context.Background(), p.Runner)
	if err != nil {
		return fmt.Errorf("detect kernel features: %w", err)
	}
	_, err = link.Supports(caps, shaper, c)
	return err
}

func cmdDoctor(p *Process, args []string) error {
	fs := newFlagSet(p, "doctor", "check this machine: root, tools, kernel features for shaping and delay", "wirelab doctor")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	var problems []string
	if p.IsRoot != nil && !p.IsRoot() {
		problems = append(problems, "not root: the lab needs root")
	}
	for _, t := range tools {
		path, err := exec.LookPath(t.cmd)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s missing (apt-get install %s)", t.cmd, t.pkg))
			continue
		}
		fmt.Fprintf(p.Stdout, "ok   %-20s %s\n", t.cmd, path)
	}
	caps, err := link.Detect(context.Background(), p.Runner)
	if err != nil {
		problems = append(problems, "kernel feature detection failed: "+err.Error())
	} else {
		fmt.Fprintf(p.Stdout, "ok   kernel              htb=%v netem=%v nfqueue=%v\n", caps.HTB, caps.Netem, caps.NFQueue)
	}
	for _, pr := range problems {
		fmt.Fprintf(p.Stdout, "FAIL %s\n", pr)
	}
	if len(problems) > 0 {
		return errors.New("doctor: this machine cannot run the lab as is")
	}
	return nil
}
