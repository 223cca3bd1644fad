package mariadb

import (
	"crypto/x509"
	"fmt"
	"time"

	"github.com/wirelab/wirelab/internal/pki"
)

// Certificate files written by GenerateCerts.
const (
	CAFile         = "ca.pem"
	CAKeyFile      = "ca-key.pem"
	ServerCertFile = "server-cert.pem"
	ServerKeyFile  = "server-key.pem"
	ClientCertFile = "client-cert.pem"
	ClientKeyFile  = "client-key.pem"
	// SysbenchCAFile is a copy of ca.pem: sysbench 1.0.20 with --mysql-ssl=on loads
	// client-key.pem, client-cert.pem and cacert.pem from its working directory.
	SysbenchCAFile = "cacert.pem"
)

const certValidity = 10 * 365 * 24 * time.Hour

// GenerateCerts writes a throw-away CA and a server and a client certificate signed by
// it into dir (created if missing). The server certificate names serverHosts (IPs or DNS
// names) plus 127.0.0.1 and localhost. ECDSA P-256 keys in PKCS#8 are accepted by both
// the server's OpenSSL and sysbench's GnuTLS-based libmariadb.
func GenerateCerts(dir string, serverHosts []string) error {
	ca, err := pki.NewCA("wirelab test CA", certValidity)
	if err != nil {
		return fmt.Errorf("generate certs: %w", err)
	}
	cn := "localhost"
	if len(serverHosts) > 0 && serverHosts[0] != "" {
		cn = serverHosts[0]
	}
	files := map[string][]byte{CAFile: ca.CertPEM(), SysbenchCAFile: ca.CertPEM()}
	if files[CAKeyFile], err = ca.KeyPEM(); err != nil {
		return fmt.Errorf("generate certs: %w", err)
	}
	hosts := append(append([]string(nil), serverHosts...), "127.0.0.1", "localhost")
	if files[ServerCertFile], files[ServerKeyFile], err = ca.Issue(cn, hosts, x509.ExtKeyUsageServerAuth); err != nil {
		return fmt.Errorf("generate certs: %w", err)
	}
	if files[ClientCertFile], files[ClientKeyFile], err = ca.Issue("sbtest", nil, x509.ExtKeyUsageClientAuth); err != nil {
		return fmt.Errorf("generate certs: %w", err)
	}
	if err := pki.WriteFiles(dir, files); err != nil {
		return fmt.Errorf("generate certs: %w", err)
	}
	return nil
}
