package tunnel

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"time"
)

// drainPoll is how often Drain looks whether the open connections have ended.
const drainPoll = 50 * time.Millisecond

// Drain stops accepting (the listener closes; an exit also refuses new streams on its mux
// links) and returns once no connection or stream is open, or when ctx ends, with ctx's
// error. The open ones run on until then: the caller ends Serve's context after Drain.
func (t *Tunnel) Drain(ctx context.Context) error {
	t.draining.Store(true)
	t.ln.Close()
	tk := time.NewTicker(drainPoll)
	defer tk.Stop()
	for t.c.active.Load() > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tk.C:
		}
	}
	return nil
}

// ReloadTLS reads the certificate, key and CA files again; connections made from then on
// use them, open ones keep theirs. On failure the end keeps what it had, logs why and
// returns the error.
func (t *Tunnel) ReloadTLS() error {
	if t.cfg.TLSCert == "" {
		return errors.New("reload tls: this end was given no --tls-cert, --tls-key and --tls-ca to read again")
	}
	cfg, err := t.cfg.loadTLS()
	if err != nil {
		t.log.Error("tls reload failed: keeping the certificate in use", "err", err)
		return fmt.Errorf("reload tls: %w", err)
	}
	t.tls.Store(cfg)
	t.log.Info("tls reloaded", "cert", t.cfg.TLSCert, "not_after", notAfter(cfg).Format(time.RFC3339))
	return nil
}

// CertNotAfter is when the certificate new connections use expires; zero without TLS.
func (t *Tunnel) CertNotAfter() time.Time { return notAfter(t.tls.Load()) }

func notAfter(cfg *tls.Config) time.Time {
	if cfg == nil || len(cfg.Certificates) == 0 || len(cfg.Certificates[0].Certificate) == 0 {
		return time.Time{}
	}
	leaf := cfg.Certificates[0].Leaf
	if leaf == nil {
		var err error
		if leaf, err = x509.ParseCertificate(cfg.Certificates[0].Certificate[0]); err != nil {
			return time.Time{}
		}
	}
	return leaf.NotAfter
}
