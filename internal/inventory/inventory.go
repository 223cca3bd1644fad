package inventory

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/wirelab/wirelab/internal/engine"
)

// Roles a host can have.
const (
	Client  = "client"
	Server  = "server"
	Replica = "replica"
)

// Inventory is a parsed and validated hosts.yaml.
type Inventory struct {
	// KnownHosts is the known_hosts file host keys are checked against (default
	// ~/.ssh/known_hosts).
	KnownHosts string `yaml:"known_hosts"`
	Defaults   Access `yaml:"defaults"`
	Hosts      []Host `yaml:"hosts"`
	Path       string `yaml:"-"`
}

// Access is how to log in; a host's own fields override the inventory's defaults.
type Access struct {
	User string `yaml:"user"`
	Port int    `yaml:"port"`
	Key  string `yaml:"key"` // private key file; "" = ssh-agent only
}

// Host is one machine.
type Host struct {
	Name    string `yaml:"name"`
	Role    string `yaml:"role"`
	Address string `yaml:"address"` // SSH address: a name or an IP, without port
	Access  `yaml:",inline"`
	// NIC is the client's interface toward the server: the one wirelab shapes.
	NIC string `yaml:"nic"`
	// DataAddress is the address the client reaches the server on when it is not the SSH
	// address (a separate data network); it is the address the shaping matches.
	DataAddress string `yaml:"data_address"`
	Server      *DB    `yaml:"server"`
}

// DB says which database server a server or replica host runs: Start "mariadb" or
// "postgres" (the distribution's package, in a temp datadir, as the lab does; the
// study's --engine must name the same) or an existing server's DSN
// whose password comes from an environment variable or a file, never from the inventory.
type DB struct {
	Start        string `yaml:"start"`
	DSN          string `yaml:"dsn"`
	PasswordEnv  string `yaml:"password_env"`
	PasswordFile string `yaml:"password_file"`
}

// SSHAddr is host:port for the SSH connection.
func (h Host) SSHAddr() string { return net.JoinHostPort(h.Address, fmt.Sprint(h.Port)) }

// Existing says whether h is the study's server named by a DSN: an existing server
// wirelab neither starts nor logs in to the host of (no SSH there; its CPU is not seen).
func (h Host) Existing() bool { return h.Role == Server && h.Server != nil && h.Server.DSN != "" }

// PeerAddress is the address other hosts reach this one on.
func (h Host) PeerAddress() string {
	if h.DataAddress != "" {
		return h.DataAddress
	}
	return h.Address
}

// Load reads and validates path. home expands a leading ~/ in file paths.
func Load(path, home string) (*Inventory, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read the inventory: %w", err)
	}
	inv, err := Parse(b, home)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	inv.Path = path
	return inv, nil
}

// Parse reads an inventory, fills defaults and validates it; unknown fields are errors
// (a misspelt "nic" must not silently mean "shape nothing").
func Parse(b []byte, home string) (*Inventory, error) {
	var inv Inventory
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&inv); err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	inv.expand(home)
	if err := inv.Validate(); err != nil {
		return nil, err
	}
	return &inv, nil
}

func (inv *Inventory) expand(home string) {
	tilde := func(p string) string {
		if rest, ok := strings.CutPrefix(p, "~/"); ok && home != "" {
			return filepath.Join(home, rest)
		}
		return p
	}
	if inv.KnownHosts == "" && home != "" {
		inv.KnownHosts = filepath.Join(home, ".ssh", "known_hosts")
	}
	inv.KnownHosts = tilde(inv.KnownHosts)
	for i := range inv.Hosts {
		h := &inv.Hosts[i]
		if h.User == "" {
			h.User = inv.Defaults.User
		}
		if h.Port == 0 {
			h.Port = inv.Defaults.Port
		}
		if h.Port == 0 {
			h.Port = 22
		}
		if h.Key == "" {
			h.Key = inv.Defaults.Key
		}
		h.Key = tilde(h.Key)
		if h.Server != nil {
			h.Server.PasswordFile = tilde(h.Server.PasswordFile)
		}
		// An existing server's host is where its DSN points unless the file says otherwise.
		if h.Existing() && h.Address == "" {
			if d, err := engine.ParseDSN(h.Server.DSN); err == nil {
				h.Address = d.Host
			}
		}
	}
}

var nameRe = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9._-]{0,62}$`)

// Validate checks every host and the roles: one or more clients (or none beside a
// replica; a study that loads the server from one host only refuses more, naming them),
// exactly one server, any number of replicas. All problems are reported together.
func (inv *Inventory) Validate() error {
	var errs []error
	seen := map[string]bool{}
	count := map[string]int{}
	if len(inv.Hosts) == 0 {
		errs = append(errs, errors.New("hosts: none; want a client and a server"))
	}
	for i, h := range inv.Hosts {
		where := fmt.Sprintf("hosts[%d]", i)
		if h.Name != "" {
			where += " (" + h.Name + ")"
		}
		bad := func(field, format string, a ...any) {
			errs = append(errs, fmt.Errorf("%s: %s: %s", where, field, fmt.Sprintf(format, a...)))
		}
		switch {
		case !nameRe.MatchString(h.Name):
			bad("name", "%q: want letters, digits, '.', '_' or '-'", h.Name)
		case seen[h.Name]:
			bad("name", "%q is used twice", h.Name)
		}
		seen[h.Name] = true
		count[h.Role]++
		switch h.Role {
		case Client, Server, Replica:
		default:
			bad("role", "%q: want client, server or replica", h.Role)
		}
		if h.Address == "" || strings.ContainsAny(h.Address, " /@") || strings.Contains(strings.Trim(h.Address, "[]"), ":") && net.ParseIP(strings.Trim(h.Address, "[]")) == nil {
			bad("address", "%q: want a host name or IP address (the port goes in port)", h.Address)
		}
		if h.DataAddress != "" && net.ParseIP(h.DataAddress) == nil {
			bad("data_address", "%q: want an IP address", h.DataAddress)
		}
		if h.Port < 1 || h.Port > 65535 {
			bad("port", "%d: want 1-65535", h.Port)
		}
		if h.User == "" && !h.Existing() {
			bad("user", "missing (set it on the host or under defaults)")
		}
		if h.Key != "" && !h.Existing() {
			if _, err := os.Stat(h.Key); err != nil {
				bad("key", "%v; name a private key file, or leave key out to use ssh-agent", err)
			}
		}
		if h.Role == Client && h.NIC == "" {
			bad("nic", "missing: the client's interface toward the server, the one wirelab shapes (ip route get <server address>)")
		}
		errs = append(errs, h.validateServer(where)...)
	}
	// No client is fine beside a replica: study replication measures across the replica's
	// wire, and the studies that need a client say so (Clients).
	if count[Client] == 0 && count[Replica] == 0 {
		errs = append(errs, errors.New("hosts: none with role client; want at least one"))
	}
	if count[Server] != 1 {
		errs = append(errs, fmt.Errorf("hosts: %d with role server; want exactly one", count[Server]))
	}
	return errors.Join(errs...)
}

func (h Host) validateServer(where string) []error {
	var errs []error
	bad := func(format string, a ...any) {
		errs = append(errs, fmt.Errorf("%s: server: %s", where, fmt.Sprintf(format, a...)))
	}
	s := h.Server
	switch {
	case h.Role == Client && s != nil:
		bad("a client runs no server; remove the block or change the role")
		return errs
	case h.Role == Client:
		return nil
	case s == nil:
		bad("missing: {start: mariadb}, {start: postgres} or {dsn: ..., password_env: NAME}")
		return errs
	}
	switch {
	case s.Start != "" && s.DSN != "":
		bad("start and dsn both set; pick one")
	case s.Start != "" && s.Start != string(engine.MariaDB) && s.Start != string(engine.Postgres):
		bad("start %q: want mariadb or postgres", s.Start)
	case s.Start == "" && s.DSN == "":
		bad("want start: mariadb, start: postgres or a dsn")
	}
	if s.Start != "" && (s.PasswordEnv != "" || s.PasswordFile != "") {
		bad("password_env/password_file go with dsn; wirelab makes the users of a server it starts")
	}
	if s.DSN == "" {
		return errs
	}
	_, err := engine.ParseDSN(s.DSN)
	switch {
	case errors.Is(err, engine.ErrDSNPassword):
		bad("dsn carries a password; remove it and use password_env or password_file")
	case err != nil:
		bad("%v", err)
	}
	if (s.PasswordEnv == "") == (s.PasswordFile == "") {
		bad("with dsn, set exactly one of password_env (an environment variable) or password_file")
	}
	if err == nil && h.Existing() {
		errs = append(errs, h.checkDSNPeer(where)...)
	}
	return errs
}

// checkDSNPeer refuses an existing server whose DSN names another IP address than the
// one the client's NIC is shaped toward (data_address, else address): sysbench would
// reach the server around the shaping. A DSN naming its host by name is checked where
// the name is resolved, before the study starts (the shaped peer must be one of its
// addresses).
func (h Host) checkDSNPeer(where string) []error {
	d, _ := engine.ParseDSN(h.Server.DSN)
	ip := net.ParseIP(d.Host)
	if ip == nil || ip.Equal(net.ParseIP(h.PeerAddress())) {
		return nil
	}
	field := "address"
	if h.DataAddress != "" {
		field = "data_address"
	}
	return []error{fmt.Errorf("%s: %s: %q but server.dsn names %s: the client's NIC is shaped toward %s only, so the DSN must name that address (or leave address out: it defaults to the DSN's host)",
		where, field, h.PeerAddress(), d.Host, field)}
}

// Password returns the existing server's password from its environment variable or file.
func (h Host) Password(getenv func(string) string) (string, error) {
	s := h.Server
	if s == nil || s.DSN == "" {
		return "", fmt.Errorf("host %s: no dsn, so no password to read", h.Name)
	}
	if s.PasswordEnv != "" {
		v := getenv(s.PasswordEnv)
		if v == "" {
			return "", fmt.Errorf("host %s: server.password_env: $%s is empty or unset; export it before running wirelab", h.Name, s.PasswordEnv)
		}
		return v, nil
	}
	pw, err := engine.ReadPasswordFile(s.PasswordFile)
	if err != nil {
		return "", fmt.Errorf("host %s: server.password_file: %w", h.Name, err)
	}
	return pw, nil
}

// Role returns the hosts with role, in file order.
func (inv *Inventory) Role(role string) []Host {
	var out []Host
	for _, h := range inv.Hosts {
		if h.Role == role {
			out = append(out, h)
		}
	}
	return out
}
