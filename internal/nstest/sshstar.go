package nstest

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// SSHStar is one server host and several client hosts, each a network namespace with
// this machine's sshd (as SSHPair's), all in one /24: the server's namespace has a bridge
// br0 that holds its address, and each client's NIC is a veth whose peer is a port of
// that bridge, so every client reaches the server over a link of its own and the clients
// reach each other through the bridge. Client i's NIC is named eth<i> (NewSSHStar): the
// hosts share this machine's /run, where a shaped NIC's delay line keeps a pid file named
// after the NIC, which on real hosts are separate machines; NewSSHStarOneNIC names them
// all alike, as one machine's namespaces that wirelab must refuse.
type SSHStar struct {
	ServerNS, ServerAddr string
	ClientNS, ClientAddr []string
	NICs                 []string // client i's NIC toward the server
	Dir                  string   // keys, sshd configs and logs; removed when the test ends
	Key                  string   // the client key authorized on every host
	KnownHosts           string   // every host's key, by address
}

// ClientNIC is client i's interface toward the server.
func ClientNIC(i int) string { return "eth" + strconv.Itoa(i) }

// NewSSHStar builds the star: the server on serverAddr/24, client i on clientAddrs[i]/24.
// Use addresses of one 198.18.0.0/15 /24 no parallel test uses. Everything is killed and
// removed when the test ends.
func NewSSHStar(t testing.TB, serverAddr string, clientAddrs ...string) *SSHStar {
	t.Helper()
	return newSSHStar(t, ClientNIC, serverAddr, clientAddrs...)
}

// NewSSHStarOneNIC is NewSSHStar with every client's NIC named nic.
func NewSSHStarOneNIC(t testing.TB, nic, serverAddr string, clientAddrs ...string) *SSHStar {
	t.Helper()
	return newSSHStar(t, func(int) string { return nic }, serverAddr, clientAddrs...)
}

func newSSHStar(t testing.TB, nicOf func(i int) string, serverAddr string, clientAddrs ...string) *SSHStar {
	t.Helper()
	id := FixtureID()
	s := &SSHStar{ServerNS: sshPrefix + id + "-s", ServerAddr: serverAddr, ClientAddr: clientAddrs, Dir: t.TempDir()}
	for i := range clientAddrs {
		s.ClientNS = append(s.ClientNS, fmt.Sprintf("%s%s-c%d", sshPrefix, id, i))
	}
	for _, ns := range append([]string{s.ServerNS}, s.ClientNS...) {
		mustRun(t, "ip", "netns", "add", ns)
		t.Cleanup(func() { KillNetns(ns) })
		mustRun(t, "ip", "-n", ns, "link", "set", "lo", "up")
	}
	mustRun(t, "ip", "-n", s.ServerNS, "link", "add", "br0", "type", "bridge")
	mustRun(t, "ip", "-n", s.ServerNS, "addr", "add", serverAddr+"/24", "dev", "br0")
	mustRun(t, "ip", "-n", s.ServerNS, "link", "set", "br0", "up")
	for i, ns := range s.ClientNS {
		nic, port := nicOf(i), "vc"+strconv.Itoa(i)
		s.NICs = append(s.NICs, nic)
		mustRun(t, "ip", "link", "add", nic, "netns", ns, "type", "veth", "peer", "name", port, "netns", s.ServerNS)
		mustRun(t, "ip", "-n", s.ServerNS, "link", "set", port, "master", "br0")
		mustRun(t, "ip", "-n", s.ServerNS, "link", "set", port, "up")
		mustRun(t, "ip", "-n", ns, "addr", "add", clientAddrs[i]+"/24", "dev", nic)
		mustRun(t, "ip", "-n", ns, "link", "set", nic, "up")
	}
	s.Key = filepath.Join(s.Dir, "id_ed25519")
	mustRun(t, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "wirelab-test", "-f", s.Key)
	var kh strings.Builder
	nss, addrs := append([]string{s.ServerNS}, s.ClientNS...), append([]string{serverAddr}, clientAddrs...)
	for i, ns := range nss {
		kh.WriteString(addrs[i] + " " + startSSHD(t, s.Dir, s.Key, ns, addrs[i]))
	}
	for i, ns := range nss {
		waitListening(t, ns, net.JoinHostPort(addrs[i], "22"))
	}
	s.KnownHosts = filepath.Join(s.Dir, "known_hosts")
	if err := os.WriteFile(s.KnownHosts, []byte(kh.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return s
}
