package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"

	"github.com/wirelab/wirelab/internal/lab"
)

// ExitError carries a child's exit code through Main.
type ExitError struct{ Code int }

func (e *ExitError) Error() string { return fmt.Sprintf("exit status %d", e.Code) }

func cmdExec(p *Process, args []string) error {
	fs := newFlagSet(p, "exec", "run any command inside a lab host (client, server, wire, replica) with WIRELAB_* set",
		"wirelab exec client -- sh -c 'sysbench oltp_point_select --mysql-host=$WIRELAB_SERVER_HOST --mysql-user=$WIRELAB_DB_USER --mysql-password=$WIRELAB_DB_PASSWORD --mysql-db=$WIRELAB_DB_NAME --time=5 run'\nwirelab exec server -- iperf3 -s -1")
	id := addLabFlag(fs)
	force := fs.Bool("force", false, "run in a lab that a running run or study owns (the command competes with its points)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	rest := fs.Args()
	if len(rest) > 0 && rest[0] == "--" {
		rest = rest[1:]
	}
	if len(rest) < 2 {
		return usagef("exec: want HOST -- COMMAND [ARGS...], e.g. wirelab exec client -- iperf3 -c 198.18.0.2")
	}
	host, argv := rest[0], rest[1:]
	if argv[0] == "--" {
		argv = argv[1:]
	}
	if len(argv) == 0 {
		return usagef("exec: no command given after %s", host)
	}
	if err := requireRoot(p); err != nil {
		return err
	}
	st, err := lab.Load(p.StateDir, *id)
	if err != nil {
		return fmt.Errorf("exec: %w", err)
	}
	ns := st.NS(host)
	if ns == "" {
		return usagef("exec: lab %s has no host %q (hosts: %v)", st.RunID, host, st.Hosts)
	}
	if !*force {
		if err := st.CheckOwner(p.proc(), "run in it anyway (the command competes with its measurement)"); err != nil {
			return fmt.Errorf("exec: %w", err)
		}
	}
	cmd := exec.CommandContext(context.Background(), "ip", append([]string{"netns", "exec", ns}, argv...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = p.Stdin, p.Stdout, p.Stderr
	cmd.Env = append(os.Environ(), labEnv(st)...)
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return &ExitError{Code: ee.ExitCode()}
		}
		return fmt.Errorf("exec in %s: %w", host, err)
	}
	return nil
}
