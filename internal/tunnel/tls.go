package tunnel

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
)

// LoadTLS builds the mutual-TLS config of one end from PEM files: its own certificate and
// key, and the CA that signed the other end. server=true (the exit) requires and verifies
// a client certificate; server=false (the entry) verifies the exit's certificate. Both
// require TLS 1.3.
func LoadTLS(cert, key, ca string, server bool) (*tls.Config, error) {
	pair, err := tls.LoadX509KeyPair(cert, key)
	if err != nil {
		return nil, fmt.Errorf("load tls key pair --tls-cert %s --tls-key %s: %w", cert, key, err)
	}
	pem, err := os.ReadFile(ca)
	if err != nil {
		return nil, fmt.Errorf("read --tls-ca: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("read --tls-ca %s: no PEM certificate found", ca)
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS13, Certificates: []tls.Certificate{pair}}
	if server {
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
		cfg.ClientCAs = pool
	} else {
		cfg.RootCAs = pool
	}
	return cfg, nil
}
