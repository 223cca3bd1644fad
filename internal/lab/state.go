package lab

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/link"
)

// Host roles. The wire host forwards between the others and carries the shaping.
const (
	Client  = "client"
	Wire    = "wire"
	Server  = "server"
	Replica = "replica"
)

// Addresses of the hosts (198.18.0.0/15 is the benchmarking range, RFC 2544). Each lab has
// its own namespaces, so two labs use the same addresses without colliding.
var (
	HostAddr = map[string]string{Server: "198.18.0.2", Client: "198.18.1.2", Replica: "198.18.2.2"}
	WireAddr = map[string]string{Server: "198.18.0.1", Client: "198.18.1.1", Replica: "198.18.2.1"}
)

// Proc is a long-running process the lab started and must stop.
type Proc struct {
	Name string `json:"name"`
	Host string `json:"host"`
	Pid  int    `json:"pid"`
}

// DB is how to reach the lab's database server.
type DB struct {
	Engine   engine.Kind `json:"engine,omitempty"` // "" in state files from before PostgreSQL: MariaDB
	Host     string      `json:"host"`
	Port     int         `json:"port"`
	Socket   string      `json:"socket"`
	User     string      `json:"user"`
	Password string      `json:"password"`
	Name     string      `json:"name"`
	CertDir  string      `json:"cert_dir"` // ca.pem, client-cert.pem, client-key.pem, cacert.pem
	DataDir  string      `json:"data_dir,omitempty"`
	Version  string      `json:"version"`
}

// Conn is how clients reach the lab's server.
func (d *DB) Conn() engine.Conn {
	k := d.Engine
	if k == "" {
		k = engine.MariaDB
	}
	return engine.Conn{Engine: k, Host: d.Host, Port: d.Port, Socket: d.Socket, User: d.User,
		Password: d.Password, DB: d.Name, CertDir: d.CertDir}
}

// State is everything a lab created; it is written after every step so teardown can undo
// a half-built lab.
type State struct {
	RunID      string            `json:"run_id"`
	Created    time.Time         `json:"created"`
	Hosts      []string          `json:"hosts"`       // roles, e.g. client, wire, server
	Namespaces map[string]string `json:"namespaces"`  // role -> netns name
	WireIfaces map[string]string `json:"wire_ifaces"` // role -> wire-host iface facing it
	Condition  link.Condition    `json:"condition"`
	Shaper     link.Shaper       `json:"shaper"`
	// Congestion is the TCP congestion control set on the hosts' routes; "" = none set
	// (the kernel's default: a lab built before the lab had a default of its own, or a
	// kernel default that could not be read).
	Congestion string `json:"congestion,omitempty"`
	ReadBack   string `json:"read_back,omitempty"`
	TempDir    string `json:"temp_dir"`
	Procs      []Proc `json:"procs"`
	DB         *DB    `json:"db,omitempty"`
	// Owner is the run or study that made the lab; nil for `wirelab up`.
	Owner *Owner `json:"owner,omitempty"`
	// Cgroup is the cgroup v2 directory every long-running process of the lab starts in,
	// so teardown finds them even after the namespaces lost their names; "" where cgroups
	// are not usable (then teardown finds them by namespace only).
	Cgroup string `json:"cgroup,omitempty"`
	// Outside is the way out to an existing server and what it changed on this machine;
	// nil when the lab's server host runs its own database.
	Outside *Outside `json:"outside,omitempty"`
	Path    string   `json:"-"`
}

// NS returns the namespace name of a role.
func (s *State) NS(role string) string { return s.Namespaces[role] }

// Save writes the state file atomically.
func (s *State) Save() error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("encode lab state: %w", err)
	}
	tmp := s.Path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("write lab state: %w", err)
	}
	if err := os.Rename(tmp, s.Path); err != nil {
		return fmt.Errorf("write lab state: %w", err)
	}
	return nil
}

// ErrNoLab is returned when no lab is up.
var ErrNoLab = errors.New("no lab is up")

// ErrManyLabs is returned when several labs are up and none was named.
var ErrManyLabs = errors.New("several labs are up")

// Load reads one lab's state from dir; id "" picks the only lab.
func Load(dir, id string) (*State, error) {
	if id == "" {
		ids, err := List(dir)
		if err != nil {
			return nil, err
		}
		switch len(ids) {
		case 0:
			return nil, ErrNoLab
		case 1:
			id = ids[0]
		default:
			return nil, fmt.Errorf("%w (%s): pick one with --lab ID", ErrManyLabs, strings.Join(ids, ", "))
		}
	}
	path := filepath.Join(dir, id+".json")
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("lab %q: %w", id, ErrNoLab)
	}
	if err != nil {
		return nil, fmt.Errorf("read lab state: %w", err)
	}
	var s State
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("decode lab state %s: %w", path, err)
	}
	s.Path = path
	return &s, nil
}

// List returns the run ids of the labs with a state file in dir, sorted.
func List(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list labs: %w", err)
	}
	var ids []string
	for _, e := range ents {
		if n := e.Name(); strings.HasSuffix(n, ".json") {
			ids = append(ids, strings.TrimSuffix(n, ".json"))
		}
	}
	sort.Strings(ids)
	return ids, nil
}
