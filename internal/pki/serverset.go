package pki

import (
	"crypto/x509"
	"fmt"
	"time"
)

// File names of a database server's certificate set. Both database engines use the same
// names, so one lab certificate directory serves either.
const (
	CAFile         = "ca.pem"
	CAKeyFile      = "ca-key.pem"
	ServerCertFile = "server-cert.pem"
	ServerKeyFile  = "server-key.pem"
	ClientCertFile = "client-cert.pem"
	ClientKeyFile  = "client-key.pem"
)

// ServerSetValidity is how long a server set is valid: longer than any lab lives.
const ServerSetValidity = 10 * 365 * 24 * time.Hour

// ServerSet makes a throw-away CA and a server and a client certificate signed by it, as
// file name -> PEM (the names above). The server certificate names serverHosts plus
// 127.0.0.1 and localhost; its common name is the first host. The client certificate's
// common name is clientCN, the database user it stands for.
func ServerSet(serverHosts []string, clientCN string) (map[string][]byte, error) {
	ca, err := NewCA("wirelab test CA", ServerSetValidity)
	if err != nil {
		return nil, fmt.Errorf("server certificate set: %w", err)
	}
	cn := "localhost"
	if len(serverHosts) > 0 && serverHosts[0] != "" {
		cn = serverHosts[0]
	}
	files := map[string][]byte{CAFile: ca.CertPEM()}
	if files[CAKeyFile], err = ca.KeyPEM(); err != nil {
		return nil, fmt.Errorf("server certificate set: %w", err)
	}
	hosts := append(append([]string(nil), serverHosts...), "127.0.0.1", "localhost")
	if files[ServerCertFile], files[ServerKeyFile], err = ca.Issue(cn, hosts, x509.ExtKeyUsageServerAuth); err != nil {
		return nil, fmt.Errorf("server certificate set: %w", err)
	}
	if files[ClientCertFile], files[ClientKeyFile], err = ca.Issue(clientCN, nil, x509.ExtKeyUsageClientAuth); err != nil {
		return nil, fmt.Errorf("server certificate set: %w", err)
	}
	return files, nil
}
