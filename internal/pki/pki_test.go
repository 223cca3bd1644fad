package pki

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestIssuedLeafVerifiesForItsHostsOnly(t *testing.T) {
	ca, err := NewCA("test CA", time.Hour*24)
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM, err := ca.Issue("srv", []string{"198.18.0.2", "localhost", "198.18.0.2", ""}, x509.ExtKeyUsageServerAuth)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tls.X509KeyPair(certPEM, keyPEM); err != nil {
		t.Fatalf("cert and key do not pair: %v", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca.CertPEM()) {
		t.Fatal("CA PEM does not parse")
	}
	blk, _ := pem.Decode(certPEM)
	leaf, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if len(leaf.IPAddresses) != 1 || len(leaf.DNSNames) != 1 {
		t.Errorf("SANs %v %v: duplicates or empties kept", leaf.IPAddresses, leaf.DNSNames)
	}
	opts := x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	for host, ok := range map[string]bool{"198.18.0.2": true, "localhost": true, "198.18.0.9": false} {
		opts.DNSName = host
		if _, err := leaf.Verify(opts); (err == nil) != ok {
			t.Errorf("verify for %s: %v, want ok=%v", host, err, ok)
		}
	}
	other, _ := NewCA("other", time.Hour)
	foreign := x509.NewCertPool()
	foreign.AppendCertsFromPEM(other.CertPEM())
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: foreign, DNSName: "localhost"}); err == nil {
		t.Error("leaf verified against a foreign CA")
	}
}

func TestWriteFilesKeepsKeysPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "certs")
	if err := WriteFiles(dir, map[string][]byte{"ca.pem": []byte("x"), "exit-key.pem": []byte("k")}); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]os.FileMode{"ca.pem": 0o644, "exit-key.pem": 0o600} {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil || st.Mode().Perm() != want {
			t.Errorf("%s: %v %v, want %v", name, st.Mode().Perm(), err, want)
		}
	}
}
