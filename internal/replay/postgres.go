package replay

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/wirelab/wirelab/internal/querylog"
)

// pgServer replays onto PostgreSQL through pgconn: a statement logged as text goes as one
// simple-protocol Query, one logged with parameters as one extended-protocol
// Parse/Bind/Describe/Execute/Sync with its values as text. Either is one round trip.
type pgServer struct{ t Target }

// config is pgconn's configuration for database db, from a libpq keyword string so TLS
// follows libpq's rules: sslmode=require, which verifies against sslrootcert when the
// target names a CA.
func (s *pgServer) config(db string) (*pgconn.Config, error) {
	host := s.t.Host
	if s.t.Socket != "" {
		host = s.t.Socket
	}
	kv := []string{"host=" + pgQuote(host), fmt.Sprintf("port=%d", s.t.Port), "user=" + pgQuote(s.t.User),
		"dbname=" + pgQuote(db), fmt.Sprintf("connect_timeout=%d", int(connectTimeout.Seconds()))}
	switch {
	case !s.t.TLS:
		kv = append(kv, "sslmode=disable")
	case s.t.CA != "":
		kv = append(kv, "sslmode=require", "sslrootcert="+pgQuote(s.t.CA))
	default:
		kv = append(kv, "sslmode=require")
	}
	cfg, err := pgconn.ParseConfig(strings.Join(kv, " "))
	if err != nil {
		return nil, err
	}
	cfg.Password = s.t.Password
	if cfg.TLSConfig != nil {
		cfg.TLSConfig.CurvePreferences = clientCurves
	}
	return cfg, nil
}

// pgQuote quotes a libpq keyword value.
func pgQuote(v string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(v) + "'"
}

func (s *pgServer) open(ctx context.Context, db string, clk *clock) (*pgConn, *meter, error) {
	cfg, err := s.config(db)
	if err != nil {
		return nil, nil, err
	}
	var m *meter
	cfg.DialFunc = dialer(clk, &m)
	pc, err := pgconn.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, m, err
	}
	return &pgConn{pc: pc}, m, nil
}

// probe implements server: PostgreSQL has no statement size the replayer checks.
func (s *pgServer) probe(ctx context.Context) (serverInfo, error) {
	c, _, err := s.open(ctx, s.t.DB, newClock())
	if err != nil {
		return serverInfo{}, err
	}
	defer c.close()
	return serverInfo{Version: "PostgreSQL " + c.pc.ParameterStatus("server_version")}, nil
}

// connect implements server.
func (s *pgServer) connect(ctx context.Context, db string, clk *clock) (dbConn, *meter, error) {
	return asConn(s.open(ctx, db, clk))
}

type pgConn struct {
	pc   *pgconn.PgConn
	vals [][]byte
}

// exec implements dbConn. The background context keeps pgconn from watching a context
// per statement; a replay that must stop mid-statement closes the connection instead.
func (c *pgConn) exec(ev *querylog.Event, _ Class) (int64, error) {
	ctx := context.Background()
	if ev.Params != nil {
		c.vals = c.vals[:0]
		for i, p := range ev.Params {
			if i < len(ev.Null) && ev.Null[i] {
				c.vals = append(c.vals, nil)
			} else {
				c.vals = append(c.vals, []byte(p))
			}
		}
		rr := c.pc.ExecParams(ctx, ev.SQL, c.vals, nil, nil, nil)
		for rr.NextRow() {
		}
		tag, err := rr.Close()
		return tag.RowsAffected(), c.error(err)
	}
	mrr := c.pc.Exec(ctx, ev.SQL)
	var n int64
	for mrr.NextResult() {
		rr := mrr.ResultReader()
		for rr.NextRow() {
		}
		tag, _ := rr.Close() // an error here is mrr's too
		n += tag.RowsAffected()
	}
	return n, c.error(mrr.Close())
}

// error makes a server's rejection, or a client-side refusal that leaves the connection
// open, a *serverError.
func (c *pgConn) error(err error) error {
	if err == nil {
		return nil
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return &serverError{Code: pe.Code, Msg: pe.Message}
	}
	if !c.pc.IsClosed() {
		return &serverError{Code: "client", Msg: err.Error()}
	}
	return err
}

// close says goodbye (Terminate) and closes, within a bound if the server stopped
// reading.
func (c *pgConn) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = c.pc.Close(ctx)
}
