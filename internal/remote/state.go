package remote

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/result"
)

// StateFile is where the agent reports its server (ServerState) in the server's
// directory on its host, mode 0600: it holds the bench user's password.
const StateFile = "server.json"

// AgentLog is the name of the agent's standard output and error in the server's
// directory: mariadb-agent.log, postgres-agent.log.
func AgentLog(k engine.Kind) string { return string(k) + "-agent.log" }

// ServerState is StateFile: written by `wirelab agent <engine>` once its server answers,
// or with only Error when it could not start it.
type ServerState struct {
	Error string `json:"error,omitempty"`
	// Socket is MariaDB's unix socket, PostgreSQL's socket directory: a path on the
	// server host.
	Socket   string `json:"socket,omitempty"`
	Host     string `json:"host,omitempty"` // TCP address clients dial (the bind address)
	Port     int    `json:"port,omitempty"`
	User     string `json:"user,omitempty"` // the bench user, allowed from any host
	Password string `json:"password,omitempty"`
	DB       string `json:"db,omitempty"`
	Pid      int    `json:"pid,omitempty"`       // the server's main process: mariadbd, the postmaster
	AgentPid int    `json:"agent_pid,omitempty"` // the agent's, which stops the server on SIGTERM
	Version  string `json:"version,omitempty"`   // the server's own version string
	CertDir  string `json:"cert_dir,omitempty"`  // CA and client certificates, on the server host
	// Settings are the wire's settings when the agent read them at start (PostgreSQL's,
	// read with the server's own psql); empty when the backend asks the server later.
	Settings []result.Setting `json:"settings,omitempty"`
}

// ParseState reads a state file's content. A file with Error set is returned with an error
// carrying it; one without the server's pid, socket or port is an error too.
func ParseState(b []byte) (ServerState, error) {
	var st ServerState
	if err := json.Unmarshal(b, &st); err != nil {
		return st, fmt.Errorf("read %s: %w", StateFile, err)
	}
	if st.Error != "" {
		return st, errors.New(st.Error)
	}
	if st.Pid <= 0 || st.Socket == "" || st.Port <= 0 {
		return st, fmt.Errorf("read %s: no server in it (pid %d, socket %q, port %d)", StateFile, st.Pid, st.Socket, st.Port)
	}
	return st, nil
}

// WriteState writes st to dir/StateFile, mode 0600, through a temp file renamed over it,
// so a reader never sees half of it.
func WriteState(dir string, st ServerState) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("write %s: %w", StateFile, err)
	}
	f, err := os.CreateTemp(dir, "."+StateFile+"-*") // created 0600
	if err != nil {
		return fmt.Errorf("write %s: %w", StateFile, err)
	}
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), filepath.Join(dir, StateFile))
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("write %s in %s: %w", StateFile, dir, err)
	}
	return nil
}
