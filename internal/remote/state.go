package remote

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Files of the agent's directory on the server host.
const (
	// StateFile is where the agent reports its server (ServerState), mode 0600: it holds
	// the bench user's password.
	StateFile = "server.json"
	// AgentLog is the agent's standard output and error.
	AgentLog = "mariadb-agent.log"
)

// ServerState is StateFile: written by `wirelab agent mariadb` once its server answers,
// or with only Error when it could not start it.
type ServerState struct {
	Error    string `json:"error,omitempty"`
	Socket   string `json:"socket,omitempty"` // unix socket, a path on the server host
	Host     string `json:"host,omitempty"`   // TCP address clients dial (the bind address)
	Port     int    `json:"port,omitempty"`
	User     string `json:"user,omitempty"` // the bench user, allowed from any host
	Password string `json:"password,omitempty"`
	DB       string `json:"db,omitempty"`
	Pid      int    `json:"pid,omitempty"`       // mariadbd's
	AgentPid int    `json:"agent_pid,omitempty"` // the agent's, which stops mariadbd on SIGTERM
	Version  string `json:"version,omitempty"`   // SELECT VERSION()
	CertDir  string `json:"cert_dir,omitempty"`  // CA and client certificates, on the server host
}

// ParseState reads a state file's content. A file with Error set is returned with an error
// carrying it; one without mariadbd's pid is an error too.
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
