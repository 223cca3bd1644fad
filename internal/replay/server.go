package replay

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/querylog"
)

// server is how the replayer reaches one engine's server: one file per engine
// (mysql.go, postgres.go), chosen by newServer.
type server interface {
	// probe logs in once, before any session, and reads what the replay needs to know.
	probe(ctx context.Context) (serverInfo, error)
	// connect opens one session's connection to database db ("" = the target's) through
	// a meter on clk.
	connect(ctx context.Context, db string, clk *clock) (dbConn, *meter, error)
}

// serverInfo is what probe reads.
type serverInfo struct {
	Version string
	// MaxPacket is MySQL's max_allowed_packet, which a statement and its command byte
	// must fit in; 0 = no limit the replayer checks.
	MaxPacket int
}

// dbConn is one session's connection.
type dbConn interface {
	// exec runs one statement and reads its whole reply; rows is what it returned or
	// changed. A statement the server rejects is a *serverError and leaves the connection
	// usable; any other error means the connection is gone.
	exec(ev *querylog.Event, class Class) (rows int64, err error)
	close()
}

// serverError is a statement the server rejected; the connection goes on.
type serverError struct {
	Code string // MySQL's error number, PostgreSQL's SQLSTATE
	Msg  string
}

func (e *serverError) Error() string { return e.Code + ": " + e.Msg }

// asConn is an engine's open as connect returns it: no connection (a nil interface, not
// a nil pointer in one) on failure, with the meter of what the attempt sent.
func asConn[C dbConn](c C, m *meter, err error) (dbConn, *meter, error) {
	if err != nil {
		return nil, m, err
	}
	return c, m, nil
}

func newServer(t Target) (server, error) {
	tlsConf, err := t.tlsConfig()
	if err != nil {
		return nil, err
	}
	switch t.Engine {
	case engine.MariaDB:
		return &mysqlServer{t: t, tls: tlsConf}, nil
	case engine.Postgres:
		return &pgServer{t: t}, nil
	}
	return nil, fmt.Errorf("engine %q: want one of %v", t.Engine, engine.Kinds)
}

// tlsConfig is MySQL's TLS: verified against the CA when there is one (the lab's
// certificates name the server's address), else encrypted without verification.
// PostgreSQL's is libpq's sslmode=require, which pgconn builds from the same fields.
func (t Target) tlsConfig() (*tls.Config, error) {
	if !t.TLS || t.Engine == engine.Postgres {
		return nil, nil
	}
	c := &tls.Config{ServerName: t.Host, MinVersion: tls.VersionTLS12, CurvePreferences: clientCurves}
	if t.CA == "" {
		c.InsecureSkipVerify = true
		return c, nil
	}
	pem, err := os.ReadFile(t.CA)
	if err != nil {
		return nil, fmt.Errorf("--ca: %w", err)
	}
	c.RootCAs = x509.NewCertPool()
	if !c.RootCAs.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("--ca %s: no PEM certificate in it", t.CA)
	}
	if t.Socket != "" {
		c.ServerName = "localhost"
	}
	return c, nil
}

// clientCurves are the key exchanges the replayer offers, in OpenSSL 3.0's order, as
// libmariadb and libpq do, so its TLS handshake costs what theirs does: Go's default
// leads with a post-quantum key share, which makes the ClientHello 1.2 KB larger and
// which a server built on OpenSSL 3.0 answers with a HelloRetryRequest (a round trip).
// PostgreSQL's default ssl_ecdh_curve (prime256v1) still asks x25519-first clients,
// libpq's too, for a retry: that round trip is real.
var clientCurves = []tls.CurveID{tls.X25519, tls.CurveP256, tls.CurveP384, tls.CurveP521}

// network is where the target listens, as net.Dial takes it.
func (t Target) network() (network, addr string) {
	if t.Socket != "" {
		return "unix", t.Socket
	}
	return "tcp", net.JoinHostPort(t.Host, fmt.Sprint(t.Port))
}

// dialer returns a dial function that wraps each connection in a meter; the meter of the
// last dial is kept in *last for the caller.
func dialer(clk *clock, last **meter) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		*last = newMeter(c, clk)
		return *last, nil
	}
}

// connectTimeout bounds one connect, login included.
const connectTimeout = 30 * time.Second
