package pki

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
	"strings"
	"time"
)

// CA is a certificate authority that lives as long as the lab that made it.
type CA struct {
	cert     *x509.Certificate
	key      *ecdsa.PrivateKey
	der      []byte
	validity time.Duration
	start    time.Time
}

// NewCA makes a self-signed CA. Certificates are backdated an hour so a clock skew
// between hosts never makes them "not yet valid".
func NewCA(cn string, validity time.Duration) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate ca key: %w", err)
	}
	start := time.Now().Add(-time.Hour)
	tmpl := &x509.Certificate{
		Subject:   pkix.Name{CommonName: cn, Organization: []string{"wirelab"}},
		NotBefore: start, NotAfter: start.Add(validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true, IsCA: true, MaxPathLenZero: true,
	}
	der, err := sign(tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parse ca: %w", err)
	}
	return &CA{cert: cert, key: key, der: der, validity: validity, start: start}, nil
}

// CertPEM is the CA certificate, for the peers' trust stores.
func (ca *CA) CertPEM() []byte { return pemBlock("CERTIFICATE", ca.der) }

// KeyPEM is the CA's private key.
func (ca *CA) KeyPEM() ([]byte, error) { return keyPEM(ca.key) }

// Issue signs a leaf for cn with the given extended usage; hosts (IPs or DNS names)
// become its subject alternative names, duplicates and empties dropped.
func (ca *CA) Issue(cn string, hosts []string, usage x509.ExtKeyUsage) (certPEM, keyPEMOut []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generate key for %q: %w", cn, err)
	}
	tmpl := &x509.Certificate{
		Subject:   pkix.Name{CommonName: cn, Organization: []string{"wirelab"}},
		NotBefore: ca.start, NotAfter: ca.start.Add(ca.validity),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyAgreement,
		ExtKeyUsage: []x509.ExtKeyUsage{usage},
	}
	seen := map[string]bool{}
	for _, h := range hosts {
		if h == "" || seen[h] {
			continue
		}
		seen[h] = true
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := sign(tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return nil, nil, err
	}
	k, err := keyPEM(key)
	if err != nil {
		return nil, nil, err
	}
	return pemBlock("CERTIFICATE", der), k, nil
}

// WriteFiles writes name -> PEM into dir (created 0755); files named *key.pem are 0600.
func WriteFiles(dir string, files map[string][]byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create cert dir: %w", err)
	}
	for name, data := range files {
		mode := os.FileMode(0o644)
		if strings.HasSuffix(name, "key.pem") {
			mode = 0o600
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, mode); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
	}
	return nil
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

func keyPEM(key *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("marshal key: %w", err)
	}
	return pemBlock("PRIVATE KEY", der), nil
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}
