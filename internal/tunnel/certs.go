package tunnel

import (
	"crypto/x509"
	"fmt"
	"time"

	"github.com/wirelab/wirelab/internal/pki"
)

// DefaultCertHosts are the exit certificate's names: the lab's server address and loopback.
var DefaultCertHosts = []string{"127.0.0.1", "localhost", "198.18.0.2"}

// Cert file names written by GenerateCerts.
const (
	CAFile        = "ca.pem"
	ExitCertFile  = "exit.pem"
	ExitKeyFile   = "exit-key.pem"
	EntryCertFile = "entry.pem"
	EntryKeyFile  = "entry-key.pem"
)

// GenerateCerts writes a lab CA (ca.pem), an exit server certificate valid for hosts
// (exit.pem, exit-key.pem) and an entry client certificate (entry.pem, entry-key.pem) into
// dir, all ECDSA P-256, valid one year. Keys are mode 0600. The CA key is not kept: new
// certificates mean a new CA, which is what a lab wants.
func GenerateCerts(dir string, hosts []string) error {
	if len(hosts) == 0 {
		hosts = DefaultCertHosts
	}
	ca, err := pki.NewCA("wirelab tunnel CA", 365*24*time.Hour)
	if err != nil {
		return fmt.Errorf("tunnel certs: %w", err)
	}
	files := map[string][]byte{CAFile: ca.CertPEM()}
	if files[ExitCertFile], files[ExitKeyFile], err = ca.Issue("wirelab tunnel exit", hosts, x509.ExtKeyUsageServerAuth); err != nil {
		return fmt.Errorf("tunnel certs: %w", err)
	}
	if files[EntryCertFile], files[EntryKeyFile], err = ca.Issue("wirelab tunnel entry", nil, x509.ExtKeyUsageClientAuth); err != nil {
		return fmt.Errorf("tunnel certs: %w", err)
	}
	if err := pki.WriteFiles(dir, files); err != nil {
		return fmt.Errorf("tunnel certs: %w", err)
	}
	return nil
}
