package inventory

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// home makes a fake home with the key file the example names.
func home(t *testing.T) string {
	t.Helper()
	h := t.TempDir()
	if err := os.MkdirAll(filepath.Join(h, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h, ".ssh", "id_ed25519"), []byte("key"), 0o600); err != nil {
		t.Fatal(err)
	}
	return h
}

func TestExampleInventory(t *testing.T) {
	h := home(t)
	inv, err := Load("../../docs/hosts.example.yaml", h)
	if err != nil {
		t.Fatal(err)
	}
	if len(inv.Hosts) != 4 || inv.KnownHosts != filepath.Join(h, ".ssh/known_hosts") {
		t.Fatalf("hosts %d, known_hosts %q", len(inv.Hosts), inv.KnownHosts)
	}
	c := inv.Role(Client)[0]
	if c.Name != "app1" || c.NIC != "eth0" || c.User != "wirelab" || c.Port != 22 || c.Key != filepath.Join(h, ".ssh/id_ed25519") {
		t.Errorf("client with defaults: %+v", c)
	}
	if cs := inv.Role(Client); len(cs) != 2 || cs[1].Name != "app2" || cs[1].NIC != "ens5" {
		t.Errorf("clients: %+v, want app1 and app2 (nic ens5) in file order", cs)
	}
	s := inv.Role(Server)[0]
	if s.Server.Start != "mariadb" || s.PeerAddress() != "10.0.1.6" || s.SSHAddr() != "10.0.0.6:22" {
		t.Errorf("server: %+v", s)
	}
	r, err := inv.ReplicaFor("mariadb")
	if err != nil || r.User != "ops" || r.SSHAddr() != "db2.example.net:2222" || r.NIC != "eth1" {
		t.Errorf("replica overrides: %+v, %v", r, err)
	}
}

func TestPasswordEnv(t *testing.T) {
	inv, err := Parse([]byte(strings.Replace(good, "name: s, role: server, address: 198.18.10.2, server: {start: mariadb}",
		`name: db2, role: server, address: 198.18.10.2, server: {dsn: "b@tcp(h:3306)/db", password_env: WIRELAB_DB2_PASSWORD}`, 1)), "")
	if err != nil {
		t.Fatal(err)
	}
	r := inv.Role(Server)[0]
	env := map[string]string{"WIRELAB_DB2_PASSWORD": "s3cret"}
	if pw, err := r.Password(func(k string) string { return env[k] }); err != nil || pw != "s3cret" {
		t.Errorf("password from env: %q, %v", pw, err)
	}
	if _, err := r.Password(func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), "host db2") {
		t.Errorf("unset password env: %v", err)
	}
}

const good = `
defaults: {user: u}
hosts:
  - {name: c, role: client, address: 198.18.10.1, nic: eth0}
  - {name: s, role: server, address: 198.18.10.2, server: {start: mariadb}}
`

func TestInventoryErrorsNameHostAndField(t *testing.T) {
	if _, err := Parse([]byte(good), ""); err != nil {
		t.Fatalf("good inventory: %v", err)
	}
	for _, c := range []struct{ name, yaml, want string }{
		{"unknown field", strings.Replace(good, "nic:", "nics:", 1), "field nics not found"},
		{"no nic", strings.Replace(good, ", nic: eth0", "", 1), "hosts[0] (c): nic: missing"},
		{"bad role", strings.Replace(good, "role: client", "role: clnt", 1), `hosts[0] (c): role: "clnt"`},
		{"no client", strings.Replace(good, "role: client, address: 198.18.10.1, nic: eth0", "role: server, address: 198.18.10.1, server: {start: mariadb}", 1), "none with role client; want at least one"},
		{"port in address", strings.Replace(good, "198.18.10.2", "198.18.10.2:22", 1), "hosts[1] (s): address"},
		{"duplicate", strings.Replace(good, "name: s,", "name: c,", 1), `"c" is used twice`},
		{"missing key file", strings.Replace(good, "{user: u}", "{user: u, key: /nonexistent/id}", 1), "hosts[0] (c): key: stat /nonexistent/id"},
		{"server without block", strings.Replace(good, ", server: {start: mariadb}", "", 1), "hosts[1] (s): server: missing"},
		{"start mysql", strings.Replace(good, "start: mariadb", "start: mysql", 1), `server: start "mysql": want mariadb or postgres`},
		{"password in dsn", strings.Replace(good, "start: mariadb", `dsn: "b:pw@tcp(h:3306)/db", password_env: P`, 1), "dsn carries a password"},
		{"dsn without password source", strings.Replace(good, "start: mariadb", `dsn: "b@tcp(h:3306)/db"`, 1), "exactly one of password_env"},
		{"client with server", strings.Replace(good, "nic: eth0}", "nic: eth0, server: {start: mariadb}}", 1), "hosts[0] (c): server: a client runs no server"},
		{"no user", strings.Replace(good, "defaults: {user: u}", "", 1), "hosts[0] (c): user: missing"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.yaml), "")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("want an error with %q, got %v", c.want, err)
			}
		})
	}
}

func TestPasswordFile(t *testing.T) {
	pf := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pf, []byte("pw1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	inv, err := Parse([]byte(strings.Replace(good, "start: mariadb", `dsn: "b@tcp(h:3306)/db", password_file: `+pf, 1)), "")
	if err != nil {
		t.Fatal(err)
	}
	if pw, err := inv.Role(Server)[0].Password(os.Getenv); err != nil || pw != "pw1" {
		t.Errorf("password file: %q, %v", pw, err)
	}
}

// A server wirelab starts may be PostgreSQL as well as MariaDB.
func TestStartPostgres(t *testing.T) {
	inv, err := Parse([]byte(strings.Replace(good, "start: mariadb", "start: postgres", 1)), "")
	if err != nil {
		t.Fatal(err)
	}
	if s := inv.Role(Server)[0].Server; s.Start != "postgres" {
		t.Errorf("start %q, want postgres", s.Start)
	}
}

// Several clients are one inventory: each needs its own NIC and a name of its own.
func TestManyClients(t *testing.T) {
	two := strings.Replace(good, "  - {name: s,", "  - {name: c2, role: client, address: 198.18.10.3, nic: eth1}\n  - {name: s,", 1)
	inv, err := Parse([]byte(two), "")
	if err != nil {
		t.Fatal(err)
	}
	if cs := inv.Role(Client); len(cs) != 2 || cs[0].Name != "c" || cs[1].Name != "c2" || cs[1].NIC != "eth1" {
		t.Errorf("clients %+v, want c then c2", cs)
	}
	for _, c := range []struct{ name, yaml, want string }{
		{"second without nic", strings.Replace(two, ", nic: eth1", "", 1), "hosts[1] (c2): nic: missing"},
		{"same name", strings.Replace(two, "name: c2,", "name: c,", 1), `"c" is used twice`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := Parse([]byte(c.yaml), ""); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("want an error with %q, got %v", c.want, err)
			}
		})
	}
}

// An existing server's host is never logged in to: it needs no user and its address
// defaults to the DSN's host, which is then the address the client's NIC is shaped toward.
func TestExistingServerHost(t *testing.T) {
	const y = `
hosts:
  - {name: c, role: client, address: 198.18.10.1, nic: eth0, user: u}
  - {name: s, role: server, server: {dsn: "b@tcp(198.18.10.2:3306)/db", password_env: P}}
`
	inv, err := Parse([]byte(y), "")
	if err != nil {
		t.Fatal(err)
	}
	s := inv.Role(Server)[0]
	if !s.Existing() || s.PeerAddress() != "198.18.10.2" || inv.Role(Client)[0].Existing() {
		t.Errorf("existing %v, peer %q: want an existing server at the DSN's address", s.Existing(), s.PeerAddress())
	}
	for _, c := range []struct{ name, from, to, want string }{
		{"dsn elsewhere than address", "role: server,", "role: server, address: 198.18.10.3,",
			`hosts[1] (s): address: "198.18.10.3" but server.dsn names 198.18.10.2`},
		{"dsn elsewhere than data_address", "role: server,", "role: server, address: 10.0.0.9, data_address: 198.18.10.4,",
			`hosts[1] (s): data_address: "198.18.10.4" but server.dsn names 198.18.10.2`},
		{"started server still needs a user", `dsn: "b@tcp(198.18.10.2:3306)/db", password_env: P`, "start: mariadb", "hosts[1] (s): user: missing"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(strings.Replace(y, c.from, c.to, 1)), "")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("want an error with %q, got %v", c.want, err)
			}
		})
	}
	// A DSN naming its host by name is resolved later; the data address is then the peer.
	named := strings.Replace(y, "198.18.10.2:3306", "db.example.net:3306", 1)
	named = strings.Replace(named, "role: server,", "role: server, data_address: 198.18.10.2,", 1)
	if inv, err := Parse([]byte(named), ""); err != nil || inv.Role(Server)[0].Address != "db.example.net" {
		t.Errorf("named dsn: %v", err)
	}
}

// study replication's inventory: a server and a replica with a nic; a client is allowed
// beside them (and ignored), not required; what the study needs of the replica is named
// by hosts[i] and field, before anything is contacted.
func TestReplicaFor(t *testing.T) {
	const repl = `
defaults: {user: u}
hosts:
  - {name: s, role: server, address: 198.18.10.2, server: {start: mariadb}}
  - {name: r, role: replica, address: 198.18.10.3, nic: eth1, server: {start: mariadb}}
`
	inv, err := Parse([]byte(repl), "")
	if err != nil {
		t.Fatalf("an inventory with a replica and no client: %v", err)
	}
	if r, err := inv.ReplicaFor("mariadb"); err != nil || r.Name != "r" || r.NIC != "eth1" {
		t.Errorf("ReplicaFor = %+v, %v", r, err)
	}
	if _, err := inv.Clients(); err == nil || !strings.Contains(err.Error(), "0 with role client") {
		t.Errorf("Clients without a client: %v", err)
	}
	withClient, err := Parse([]byte(repl+"  - {name: c, role: client, address: 198.18.10.1, nic: eth0}\n"), "")
	if err != nil {
		t.Fatal(err)
	}
	if r, err := withClient.ReplicaFor("mariadb"); err != nil || r.Name != "r" {
		t.Errorf("ReplicaFor beside a client = %+v, %v", r, err)
	}
	for _, c := range []struct{ name, yaml, start, want string }{
		{"no replica", good, "mariadb", "0 with role replica"},
		{"no nic", strings.Replace(repl, ", nic: eth1", "", 1), "mariadb", "hosts[1] (r): nic: missing"},
		{"an existing server", strings.Replace(repl, "nic: eth1, server: {start: mariadb}", `nic: eth1, server: {dsn: "b@tcp(h:3306)/db", password_env: P}`, 1), "mariadb", "hosts[1] (r): server: want {start: mariadb}"},
		{"another engine", repl, "postgres", "hosts[1] (r): server: start mariadb, and the study's --engine is postgres"},
		{"two replicas", repl + "  - {name: r2, role: replica, address: 198.18.10.4, nic: eth0, server: {start: mariadb}}\n", "mariadb", "2 with role replica"},
	} {
		t.Run(c.name, func(t *testing.T) {
			inv, err := Parse([]byte(c.yaml), "")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := inv.ReplicaFor(c.start); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("want an error with %q, got %v", c.want, err)
			}
		})
	}
}
