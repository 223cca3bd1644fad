package mariadb

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"testing"
)

func TestGenerateCerts(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "certs")
	if err := GenerateCerts(dir, []string{"198.18.0.2", "db.lab"}); err != nil {
		t.Fatal(err)
	}
	read := func(name string) []byte {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, name := range []string{CAKeyFile, ServerKeyFile, ClientKeyFile} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, err %v; want 0600", name, fi.Mode().Perm(), err)
		}
	}
	if !bytes.Equal(read(CAFile), read(SysbenchCAFile)) {
		t.Error("cacert.pem is not a copy of ca.pem")
	}

	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(read(CAFile)) {
		t.Fatal("ca.pem has no certificate")
	}
	srv, err := tls.X509KeyPair(read(ServerCertFile), read(ServerKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	cli, err := tls.X509KeyPair(read(ClientCertFile), read(ClientKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(srv.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"198.18.0.2", "db.lab", "127.0.0.1", "localhost"} {
		_, err := leaf.Verify(x509.VerifyOptions{DNSName: name, Roots: pool,
			KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
		if err != nil {
			t.Errorf("server cert does not verify for %s: %v", name, err)
		}
	}
	if err := leaf.VerifyHostname("198.18.0.3"); err == nil {
		t.Error("server cert verifies for a host it does not name")
	}

	// A real mutual-TLS handshake: the client checks the server name, the server
	// requires and checks the client certificate.
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{srv},
		ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	errc := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			err = c.(*tls.Conn).Handshake()
			c.Close()
		}
		errc <- err
	}()
	c, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{RootCAs: pool, ServerName: "127.0.0.1",
		Certificates: []tls.Certificate{cli}})
	if err != nil {
		t.Fatalf("client handshake: %v", err)
	}
	c.Close()
	if err := <-errc; err != nil {
		t.Fatalf("server handshake: %v", err)
	}
}
