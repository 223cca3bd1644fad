package cli

import (
	"errors"
	"fmt"
	"sort"
	"strconv"

	"github.com/wirelab/wirelab/internal/lab"
)

func cmdStatus(p *Process, args []string) error {
	fs := newFlagSet(p, "status", "show the lab: hosts, addresses, link condition, server DSN and socket",
		"wirelab status\nwirelab status --lab 3f9a1c")
	id := fs.String("lab", "", "lab run id (needed only when several labs are up)")
	if err := parseFlags(fs, args); err != nil {
		return err
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
	fmt.Fprintf(w, "  link     %s (shaper %s)\n", st.Condition, st.Shaper)
	for _, pr := range st.Procs {
		fmt.Fprintf(w, "  process  %-14s in %-8s pid %d\n", pr.Name, pr.Host, pr.Pid)
	}
	if db := st.DB; db != nil {
		fmt.Fprintf(w, "  mariadb  %s  mysql://%s:%s@%s:%d/%s  socket %s\n", db.Version, db.User, db.Password,
			db.Host, db.Port, db.Name, db.Socket)
	}
	fmt.Fprintln(w, "  environment inside 'wirelab exec':")
	for _, e := range labEnv(st) {
		fmt.Fprintf(w, "    %s\n", e)
	}
}
