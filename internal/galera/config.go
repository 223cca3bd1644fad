package galera

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Ports each node uses on its host's lab address. Every node has a host (a network
// namespace) of its own, so the usual ports never collide.
const (
	GcommPort = 4567 // group communication: every write set and acknowledgement
	ISTPort   = 4568 // incremental state transfer (receiver)
	SSTPort   = 4444 // rsync state transfer (receiver's rsync daemon)
)

// providerPaths are where Debian's galera-4 puts the provider.
var providerPaths = []string{"/usr/lib/galera/libgalera_smm.so", "/usr/lib/libgalera_smm.so"}

// ErrNoProvider means libgalera_smm.so was not found.
var ErrNoProvider = errors.New("galera provider not found")

// findProvider returns explicit when set, else the first Debian location that exists.
func findProvider(explicit string) (string, error) {
	if explicit != "" {
		if _, err := os.Stat(explicit); err != nil {
			return "", fmt.Errorf("%w: %w", ErrNoProvider, err)
		}
		return explicit, nil
	}
	for _, p := range providerPaths {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w in %s: install galera-4 (make deps)", ErrNoProvider, strings.Join(providerPaths, ", "))
}

// node is one member's place in the cluster.
type node struct {
	Name string // the lab host (lab.Server, lab.Replica), also wsrep_node_name
	Addr string // the host's lab address: gcomm, IST and SST listen there
	// Join is the address of the node to join; "" bootstraps a new cluster.
	Join string
}

// providerOptions is wsrep_provider_options: where gcomm and IST listen, the timers and
// the windows. Only settings that differ from galera's defaults or pin an address are
// written, so the default preset really runs galera's defaults.
func providerOptions(n node, o Options) string {
	t := o.Timeouts()
	opts := []string{
		"gmcast.listen_addr=tcp://" + n.Addr + ":" + strconv.Itoa(GcommPort),
		"ist.recv_addr=" + n.Addr + ":" + strconv.Itoa(ISTPort),
		"evs.keepalive_period=" + isoDuration(t.KeepalivePeriod),
		"evs.suspect_timeout=" + isoDuration(t.SuspectTimeout),
		"evs.inactive_timeout=" + isoDuration(t.InactiveTimeout),
		"evs.install_timeout=" + isoDuration(t.InstallTimeout),
		"gmcast.peer_timeout=" + isoDuration(t.PeerTimeout),
	}
	if o.SendWindow > 0 {
		opts = append(opts, "evs.send_window="+strconv.Itoa(o.SendWindow))
	}
	if o.UserSendWindow > 0 {
		opts = append(opts, "evs.user_send_window="+strconv.Itoa(o.UserSendWindow))
	}
	if o.FCLimit > 0 {
		opts = append(opts, "gcs.fc_limit="+strconv.Itoa(o.FCLimit))
	}
	return strings.Join(opts, "; ")
}

// serverSettings are the my.cnf settings that make a lab MariaDB a galera node; they go
// in as lab.DBOptions.Extra. cluster names the cluster (a lab's run id keeps two labs'
// clusters apart even if their wires met).
func serverSettings(n node, o Options, provider, cluster string) map[string]string {
	addr := "gcomm://"
	if n.Join != "" {
		addr += n.Join + ":" + strconv.Itoa(GcommPort)
	}
	m := map[string]string{
		"wsrep_on":              "ON",
		"wsrep_provider":        provider,
		"wsrep_cluster_name":    cluster,
		"wsrep_cluster_address": addr,
		"wsrep_node_name":       n.Name,
		"wsrep_node_address":    n.Addr,
		"wsrep_sst_method":      "rsync",
		// The nodes have TLS certificates (ssl-ca ...), from which wsrep_sst_rsync would
		// demand an stunnel-encrypted transfer; the lab's throw-away data crosses only the
		// lab's own veths, so the copy goes in the clear. The SST script reads ssl-mode
		// from [mysqld] with "loose-" stripped; mariadbd ignores the loose option.
		"loose-ssl-mode":            "DISABLED",
		"wsrep_sst_receive_address": n.Addr + ":" + strconv.Itoa(SSTPort),
		"wsrep_provider_options":    `"` + providerOptions(n, o) + `"`,
		// What galera requires of every node: row events, InnoDB, interleaved
		// auto-increment locks (parallel appliers).
		"binlog_format":            "ROW",
		"default_storage_engine":   "InnoDB",
		"innodb_autoinc_lock_mode": "2",
	}
	if o.Appliers > 0 {
		m["wsrep_slave_threads"] = strconv.Itoa(o.Appliers)
	}
	return m
}
