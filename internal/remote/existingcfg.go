package remote

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/flagx"
	"github.com/wirelab/wirelab/internal/inventory"
	"github.com/wirelab/wirelab/internal/sysbench"
)

// ExistingConfig is how this machine reaches the inventory's existing server: at the
// address the client's NIC is shaped toward, with the password from password_env or
// password_file (read with getenv). Every problem is a usage error naming the host and
// the field.
func ExistingConfig(inv *inventory.Inventory, getenv func(string) string) (*engine.ExternalConfig, error) {
	sv := inv.Role(inventory.Server)[0]
	where := fmt.Sprintf("--hosts %s: host %s", inv.Path, sv.Name)
	dsn, err := engine.ParseDSN(sv.Server.DSN)
	if err != nil {
		return nil, flagx.Usagef("%s: server.dsn: %v", where, err)
	}
	ip, err := dsnPeer(dsn, sv)
	if err != nil {
		return nil, flagx.Usagef("%s: %v", where, err)
	}
	cfg := &engine.ExternalConfig{DSN: dsn, IP: ip, Timeout: 5 * time.Second, PasswordFrom: "server.password_file " + sv.Server.PasswordFile}
	if sv.Server.PasswordEnv != "" {
		cfg.PasswordFrom = "server.password_env $" + sv.Server.PasswordEnv
	}
	if cfg.Password, err = sv.Password(getenv); err != nil {
		return nil, flagx.Usagef("%s: %v", where, err)
	}
	if err := sysbench.CheckHideable(cfg.Password); err != nil {
		return nil, flagx.Usagef("%s (password from %s): %v", where, cfg.PasswordFrom, err)
	}
	return cfg, nil
}

// dsnPeer is the address the client's sysbench dials for an existing server: the host's
// data address (else address), toward which the client's NIC is shaped. The inventory
// checked that an IP in the DSN is that address; a name in the DSN must resolve, here,
// to it too, so sysbench does not reach the server around the shaping.
func dsnPeer(dsn engine.DSN, sv inventory.Host) (string, error) {
	peer := sv.PeerAddress()
	if net.ParseIP(peer) == nil {
		return "", fmt.Errorf("the server's address %q is what the client's NIC is shaped toward and must be an IP address: set data_address", peer)
	}
	if net.ParseIP(dsn.Host) != nil {
		return peer, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ips, err := net.DefaultResolver.LookupIP(ctx, "ip", dsn.Host)
	if err != nil {
		return "", fmt.Errorf("server.dsn names %s, which does not resolve here (%v): name the server by its IP address (%s)", dsn.Host, err, peer)
	}
	for _, ip := range ips {
		if ip.Equal(net.ParseIP(peer)) {
			return peer, nil
		}
	}
	return "", fmt.Errorf("server.dsn names %s, which resolves to %v, and the client's NIC is shaped toward %s (data_address, else address): name the same address in both", dsn.Host, ips, peer)
}
