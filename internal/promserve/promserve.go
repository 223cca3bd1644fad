package promserve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// Path is where the metrics are served.
const Path = "/metrics"

// Server serves one handler at Path on its own listener.
type Server struct {
	ln  net.Listener
	srv *http.Server
}

// Listen listens on addr (host:port; port 0 picks a free one) for h; nothing is served
// until Serve. The listener is open when Listen returns, so a port in use fails here,
// before the caller starts anything else.
func Listen(addr string, h http.Handler) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics: listen on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle(Path, h)
	return &Server{ln: ln, srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}}, nil
}

// Addr is the address the server listens on.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Serve serves until ctx ends, then closes the listener and every connection; name says
// whose metrics these are in the log.
func (s *Server) Serve(ctx context.Context, log *slog.Logger, name string) {
	stop := context.AfterFunc(ctx, func() { s.srv.Close() })
	defer stop()
	log.Info(name, "listen", s.ln.Addr().String(), "path", Path)
	if err := s.srv.Serve(s.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Error(name+" server stopped", "err", err)
	}
}

// Close stops a server that Serve never ran: its listener is closed.
func (s *Server) Close() error { return s.srv.Close() }
