package mariadb

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
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
// names) plus 127.0.0.1 and localhost. Keys are ECDSA P-256 in PKCS#8, which both the
// server's OpenSSL and sysbench's GnuTLS-based libmariadb accept; the certificates are
// backdated an hour so a clock skew between namespaces never makes them "not yet valid".
func GenerateCerts(dir string, serverHosts []string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("generate certs: %w", err)
	}
	now := time.Now().Add(-time.Hour)

	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("generate certs: ca key: %w", err)
	}
	caTmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: "wirelab test CA", Organization: []string{"wirelab"}},
		NotBefore:             now,
		NotAfter:              now.Add(certValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	caDER, caCert, err := sign(caTmpl, caTmpl, caKey, caKey)
	if err != nil {
		return fmt.Errorf("generate certs: ca: %w", err)
	}

	hosts := append(append([]string(nil), serverHosts...), "127.0.0.1", "localhost")
	cn := "localhost"
	if len(serverHosts) > 0 && serverHosts[0] != "" {
		cn = serverHosts[0]
	}
	srvTmpl := leafTemplate(cn, now, x509.ExtKeyUsageServerAuth)
	seen := map[string]bool{}
	for _, h := range hosts {
		if h == "" || seen[h] {
			continue
		}
		seen[h] = true
		if ip := net.ParseIP(h); ip != nil {
			srvTmpl.IPAddresses = append(srvTmpl.IPAddresses, ip)
		} else {
			srvTmpl.DNSNames = append(srvTmpl.DNSNames, h)
		}
	}
	cliTmpl := leafTemplate("sbtest", now, x509.ExtKeyUsageClientAuth)

	files := map[string][]byte{CAFile: pemCert(caDER), SysbenchCAFile: pemCert(caDER)}
	if files[CAKeyFile], err = pemKey(caKey); err != nil {
		return fmt.Errorf("generate certs: %w", err)
	}
	for _, leaf := range []struct {
		tmpl          *x509.Certificate
		cert, keyName string
	}{{srvTmpl, ServerCertFile, ServerKeyFile}, {cliTmpl, ClientCertFile, ClientKeyFile}} {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return fmt.Errorf("generate certs: %s: %w", leaf.keyName, err)
		}
		der, _, err := sign(leaf.tmpl, caCert, key, caKey)
		if err != nil {
			return fmt.Errorf("generate certs: %s: %w", leaf.cert, err)
		}
		files[leaf.cert] = pemCert(der)
		if files[leaf.keyName], err = pemKey(key); err != nil {
			return fmt.Errorf("generate certs: %w", err)
		}
	}
	for name, data := range files {
		mode := os.FileMode(0o644)
		if strings.HasSuffix(name, "-key.pem") {
			mode = 0o600
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, mode); err != nil {
			return fmt.Errorf("generate certs: %w", err)
		}
	}
	return nil
}

func leafTemplate(cn string, notBefore time.Time, usage x509.ExtKeyUsage) *x509.Certificate {
	return &x509.Certificate{
		Subject:     pkix.Name{CommonName: cn, Organization: []string{"wirelab"}},
		NotBefore:   notBefore,
		NotAfter:    notBefore.Add(certValidity),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyAgreement,
		ExtKeyUsage: []x509.ExtKeyUsage{usage},
	}
}

func sign(tmpl, parent *x509.Certificate, pub *ecdsa.PrivateKey, signer crypto.Signer) ([]byte, *x509.Certificate, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return nil, nil, err
	}
	tmpl.SerialNumber = serial
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub.Public(), signer)
	if err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	return der, cert, err
}

func pemCert(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func pemKey(key *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("marshal key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}
