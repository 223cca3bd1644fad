package replay

import (
	"context"
	"crypto/tls"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"

	"github.com/go-sql-driver/mysql"

	"github.com/wirelab/wirelab/internal/querylog"
)

// mysqlServer replays onto MariaDB/MySQL through go-sql-driver/mysql's driver.Conn,
// without database/sql's pool: each statement is one COM_QUERY (text protocol), as a
// statement in the log was one.
type mysqlServer struct {
	t   Target
	tls *tls.Config
	// maxPacket is the server's max_allowed_packet, read by probe and given to every
	// session's driver so it does not ask again at each connect.
	maxPacket int
}

// quietLogger keeps the driver's own log lines (connection resets) off the child's
// stderr: every error reaches the replayer as an error value.
type quietLogger struct{}

func (quietLogger) Print(...any) {}

func (s *mysqlServer) config(db string, dial func(context.Context, string, string) (net.Conn, error)) (*mysql.Config, error) {
	c := mysql.NewConfig()
	c.User, c.Passwd, c.DBName = s.t.User, s.t.Password, db
	c.Net, c.Addr = s.t.network()
	c.TLS = s.tls
	c.Timeout = connectTimeout
	c.DialFunc = dial
	c.Logger = quietLogger{}
	c.CheckConnLiveness = false // a liveness check is a syscall per statement
	c.MaxAllowedPacket = s.maxPacket
	if s.maxPacket == 0 {
		c.MaxAllowedPacket = 1 << 30 // probe reads the server's own
	}
	if err := c.Apply(mysql.EnableCompression(s.t.Compress)); err != nil {
		return nil, err
	}
	return c, nil
}

func (s *mysqlServer) open(ctx context.Context, db string, clk *clock) (*mysqlConn, *meter, error) {
	var m *meter
	cfg, err := s.config(db, dialer(clk, &m))
	if err != nil {
		return nil, nil, err
	}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, nil, err
	}
	dc, err := conn.Connect(ctx)
	if err != nil {
		return nil, m, err
	}
	return &mysqlConn{c: dc}, m, nil
}

// probe implements server: it reads the version and max_allowed_packet.
func (s *mysqlServer) probe(ctx context.Context) (serverInfo, error) {
	c, _, err := s.open(ctx, s.t.DB, newClock())
	if err != nil {
		return serverInfo{}, err
	}
	defer c.close()
	rows, err := c.c.(driver.QueryerContext).QueryContext(ctx, "SELECT VERSION(), @@max_allowed_packet", nil)
	if err != nil {
		return serverInfo{}, fmt.Errorf("read the server's version: %w", err)
	}
	defer rows.Close()
	v := make([]driver.Value, 2)
	if err := rows.Next(v); err != nil {
		return serverInfo{}, fmt.Errorf("read the server's version: %w", err)
	}
	max, err := strconv.Atoi(string(asBytes(v[1])))
	if err != nil {
		return serverInfo{}, fmt.Errorf("max_allowed_packet %q: %w", v[1], err)
	}
	s.maxPacket = max
	return serverInfo{Version: string(asBytes(v[0])), MaxPacket: max}, nil
}

// asBytes is a column's value as text (the driver hands integers over as numbers).
func asBytes(v driver.Value) []byte {
	if b, ok := v.([]byte); ok {
		return b
	}
	return []byte(fmt.Sprint(v))
}

// connect implements server.
func (s *mysqlServer) connect(ctx context.Context, db string, clk *clock) (dbConn, *meter, error) {
	return asConn(s.open(ctx, db, clk))
}

type mysqlConn struct {
	c    driver.Conn
	dest []driver.Value
}

// exec implements dbConn: a statement that returns rows (a SELECT, SHOW, CALL) is read
// row by row, every result set of it; any other reports the rows it changed.
func (c *mysqlConn) exec(ev *querylog.Event, class Class) (int64, error) {
	if !returnsRows(class) {
		res, err := c.c.(driver.ExecerContext).ExecContext(context.Background(), ev.SQL, nil)
		if err != nil {
			return 0, mysqlError(err)
		}
		n, _ := res.RowsAffected()
		return n, nil
	}
	rows, err := c.c.(driver.QueryerContext).QueryContext(context.Background(), ev.SQL, nil)
	if err != nil {
		return 0, mysqlError(err)
	}
	var n int64
	for {
		if cols := len(rows.Columns()); cap(c.dest) < cols {
			c.dest = make([]driver.Value, cols)
		}
		dest := c.dest[:len(rows.Columns())]
		for err = rows.Next(dest); err == nil; err = rows.Next(dest) {
			n++
		}
		if err != io.EOF {
			rows.Close()
			return n, mysqlError(err)
		}
		more, ok := rows.(driver.RowsNextResultSet)
		if !ok || !more.HasNextResultSet() || more.NextResultSet() != nil {
			break
		}
	}
	return n, mysqlError(rows.Close())
}

// returnsRows says whether a statement is read as rows rather than as a row count.
func returnsRows(c Class) bool {
	return c.Kind == KindSelect || c.Kind == KindCall || strings.HasPrefix(c.Shape, "show ")
}

// mysqlError makes a server's rejection a *serverError; other errors stay as they are
// (the connection is gone).
func mysqlError(err error) error {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return &serverError{Code: strconv.Itoa(int(me.Number)), Msg: me.Message}
	}
	return err
}

func (c *mysqlConn) close() { c.c.Close() }
