package tunnel

import (
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
	"time"
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
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create cert dir: %w", err)
	}
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("generate ca key: %w", err)
	}
	ca := &x509.Certificate{
		Subject: pkix.Name{CommonName: "wirelab tunnel CA"}, NotBefore: now.Add(-time.Hour),
		NotAfter: now.AddDate(1, 0, 0), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	caDER, err := sign(ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	if ca, err = x509.ParseCertificate(caDER); err != nil {
		return fmt.Errorf("parse ca: %w", err)
	}
	if err := writePEM(filepath.Join(dir, CAFile), "CERTIFICATE", caDER, 0o644); err != nil {
		return err
	}
	exit := leaf("wirelab tunnel exit", now, x509.ExtKeyUsageServerAuth)
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			exit.IPAddresses = append(exit.IPAddresses, ip)
		} else if h != "" {
			exit.DNSNames = append(exit.DNSNames, h)
		}
	}
	if err := issue(dir, ExitCertFile, ExitKeyFile, exit, ca, caKey); err != nil {
		return err
	}
	return issue(dir, EntryCertFile, EntryKeyFile, leaf("wirelab tunnel entry", now, x509.ExtKeyUsageClientAuth), ca, caKey)
}

func leaf(cn string, now time.Time, usage x509.ExtKeyUsage) *x509.Certificate {
	return &x509.Certificate{
		Subject: pkix.Name{CommonName: cn}, NotBefore: now.Add(-time.Hour), NotAfter: now.AddDate(1, 0, 0),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
	}
}

func issue(dir, certFile, keyFile string, tmpl, ca *x509.Certificate, caKey *ecdsa.PrivateKey) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("generate key for %s: %w", certFile, err)
	}
	der, err := sign(tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return err
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return fmt.Errorf("marshal key for %s: %w", certFile, err)
	}
	if err := writePEM(filepath.Join(dir, keyFile), "PRIVATE KEY", kder, 0o600); err != nil {
		return err
	}
	return writePEM(filepath.Join(dir, certFile), "CERTIFICATE", der, 0o644)
}

func sign(tmpl, parent *x509.Certificate, pub *ecdsa.PublicKey, key *ecdsa.PrivateKey) ([]byte, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return nil, fmt.Errorf("serial for %q: %w", tmpl.Subject.CommonName, err)
	}
	tmpl.SerialNumber = serial
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, key)
	if err != nil {
		return nil, fmt.Errorf("sign %q: %w", tmpl.Subject.CommonName, err)
	}
	return der, nil
}

func writePEM(path, typ string, der []byte, mode os.FileMode) error {
	data := pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
	if err := os.WriteFile(path, data, mode); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
