package cli

import (
	"errors"
	"flag"
	"fmt"
	"sort"
	"strconv"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/machinelock"
)

func cmdStatus(p *Process, args []string) error {
	fs := newFlagSet(p, "status", "show the lab: hosts, addresses, link condition, server DSN and socket",
		"wirelab status\nwirelab status --lab 3f9a1c")
	id := addLabFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if h, busy := machinelock.Peek(p.lockDir()); busy {
		fmt.Fprintf(p.Stdout, "measuring: %s, since %s\n", h, h.Since.Format("15:04:05Z"))
	}
	st, err := lab.Load(p.StateDir, *id)
	if errors.Is(err, lab.ErrNoLab) && *id == "" {
		fmt.Fprintln(p.Stdout, "no lab is up")
		return nil
	}
	if err != nil {
		return fmt.Errorf("status: %w", err)
	}
	printStatus(p, st)
	return nil
}

// addLabFlag is --lab, which lab a command by hand acts on: status, exec, down, link set
// and link check take the same id, and find the only lab up without it.
func addLabFlag(fs *flag.FlagSet) *string {
	return fs.String("lab", "", "lab run id (needed only when several labs are up)")
}

// labEnv is the environment a command run inside the lab sees.
func labEnv(st *lab.State) []string {
	env := []string{"WIRELAB_RUN_ID=" + st.RunID, "WIRELAB_SERVER_HOST=" + lab.HostAddr[lab.Server]}
	if db := st.DB; db != nil {
		env = append(env,
			"WIRELAB_SERVER_PORT="+strconv.Itoa(db.Port),
			"WIRELAB_SERVER_SOCKET="+db.Socket,
			"WIRELAB_DB_USER="+db.User,
			"WIRELAB_DB_PASSWORD="+db.Password,
			"WIRELAB_DB_NAME="+db.Name,
			"WIRELAB_CERT_DIR="+db.CertDir,
		)
		env = append(env, db.Conn().Env(false)...)
	}
	return env
}

func printStatus(p *Process, st *lab.State) {
	w := p.Stdout
	fmt.Fprintf(w, "lab %s (created %s)\n", st.RunID, st.Created.Format("2006-01-02 15:04:05Z"))
	roles := append([]string(nil), st.Hosts...)
	sort.Strings(roles)
	for _, r := range roles {
		addr := lab.HostAddr[r]
		if r == lab.Wire {
			addr = "forwards; shaping on its egress interfaces"
		}
		fmt.Fprintf(w, "  host %-8s netns %-20s %s\n", r, st.NS(r), addr)
	}
	fmt.Fprintf(w, "  owner    %s\n", ownerText(p, st))
	fmt.Fprintf(w, "  link     %s (shaper %s)\n", st.Condition, st.Shaper)
	for _, pr := range st.Procs {
		fmt.Fprintf(w, "  process  %-14s in %-8s pid %d\n", pr.Name, pr.Host, pr.Pid)
	}
	if st.Cgroup != "" {
		fmt.Fprintf(w, "  cgroup   %s (%d processes)\n", st.Cgroup, len(lab.Cgroups{}.Pids(st.Cgroup)))
	}
	if db := st.DB; db != nil {
		scheme := "mysql"
		if db.Conn().Engine == engine.Postgres {
			scheme = "postgres"
		}
		fmt.Fprintf(w, "  %-8s %s  %s://%s:%s@%s:%d/%s  socket %s\n", db.Conn().Engine, db.Version, scheme, db.User, db.Password,
			db.Host, db.Port, db.Name, db.Socket)
	}
	if o := st.Outside; o != nil {
		fmt.Fprintf(w, "  existing server %s:%d, routed from the server host through %s (%s)\n", o.Addr, o.Port, o.Leg, outsideText(o))
	}
	fmt.Fprintln(w, "  environment inside 'wirelab exec':")
	for _, e := range labEnv(st) {
		fmt.Fprintf(w, "    %s\n", e)
	}
}

// ownerText says whose the lab is: a run or study measuring in it (commands by hand then
// need --force), one that has exited without tearing it down, or nobody's (`wirelab up`).
func ownerText(p *Process, st *lab.State) string {
	switch o, live := st.LiveOwner(p.proc()); {
	case st.Owner == nil:
		return "by hand (wirelab up)"
	case live:
		return o.String() + ", measuring: link set, exec and down need --force"
	default:
		return st.Owner.String() + ", no longer running: 'wirelab down' removes what it left"
	}
}

// outsideText says what a lab changed on this machine to reach an existing server.
func outsideText(o *lab.Outside) string {
	t := "on this machine"
	if !o.Local {
		t = "on another machine, via " + o.Via
	}
	t += fmt.Sprintf("; %d iptables rule(s) added", len(o.Rules))
	if o.ForwardingWas != "" {
		t += fmt.Sprintf(", net.ipv4.conf.%s.forwarding %s -> 1", o.Via, o.ForwardingWas)
	}
	return t + "; down undoes them"
}
