package mariadb

import (
	"fmt"

	"github.com/wirelab/wirelab/internal/pki"
)

// Certificate files written by GenerateCerts.
const (
	CAFile         = pki.CAFile
	CAKeyFile      = pki.CAKeyFile
	ServerCertFile = pki.ServerCertFile
	ServerKeyFile  = pki.ServerKeyFile
	ClientCertFile = pki.ClientCertFile
	ClientKeyFile  = pki.ClientKeyFile
	// SysbenchCAFile is a copy of ca.pem: sysbench 1.0.20 with --mysql-ssl=on loads
	// client-key.pem, client-cert.pem and cacert.pem from its working directory.
	SysbenchCAFile = "cacert.pem"
)

// GenerateCerts writes a throw-away CA and a server and a client certificate signed by
// it into dir (created if missing). The server certificate names serverHosts (IPs or DNS
// names) plus 127.0.0.1 and localhost. ECDSA P-256 keys in PKCS#8 are accepted by both
// the server's OpenSSL and sysbench's GnuTLS-based libmariadb.
func GenerateCerts(dir string, serverHosts []string) error {
	files, err := pki.ServerSet(serverHosts, BenchUser)
	if err != nil {
		return fmt.Errorf("generate certs: %w", err)
	}
	files[SysbenchCAFile] = files[CAFile]
	if err := pki.WriteFiles(dir, files); err != nil {
		return fmt.Errorf("generate certs: %w", err)
	}
	return nil
}
