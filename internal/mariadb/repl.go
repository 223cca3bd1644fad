package mariadb

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/wirelab/wirelab/internal/dbserver"
)

// ErrNoSlave means SHOW SLAVE STATUS returned nothing: replication is not configured.
var ErrNoSlave = errors.New("replication not configured")

// ReplUser is the account CreateReplUser makes on a primary.
const ReplUser = "repl"

// CreateReplUser creates (or replaces) the replication account, reachable from any lab
// host, and returns its random password. It is not binlogged: a replica that also has the
// account would otherwise stop on the replicated CREATE USER.
func (s *Server) CreateReplUser(ctx context.Context) (user, password string, err error) {
	pw, err := dbserver.RandomPassword()
	if err != nil {
		return "", "", fmt.Errorf("create replication user: %w", err)
	}
	u := quote(ReplUser) + "@" + quote("%")
	sql := fmt.Sprintf("SET SESSION sql_log_bin=0;\nCREATE OR REPLACE USER %s IDENTIFIED BY %s;\n"+
		"GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO %s;\n", u, quote(pw), u)
	if _, err := s.Exec(ctx, sql); err != nil {
		return "", "", fmt.Errorf("create replication user: %w", err)
	}
	return ReplUser, pw, nil
}

// GTIDPos returns @@gtid_current_pos: the last GTID this server applied or wrote, per
// domain (e.g. "0-1-42"); "" on a server that has done nothing.
func (s *Server) GTIDPos(ctx context.Context) (string, error) {
	out, err := s.Exec(ctx, "SELECT @@GLOBAL.gtid_current_pos")
	if err != nil {
		return "", fmt.Errorf("read gtid position: %w", err)
	}
	return strings.TrimSpace(out), nil
}

// changeMasterSQL points a replica at a primary using GTID (slave_pos), so a fresh
// replica starts from the primary's first binlog event. compressed turns on the
// compressed client protocol for the replication stream (MariaDB has no per-channel
// option: it is the global slave_compressed_protocol, read when the IO thread connects).
func changeMasterSQL(host string, port int, user, pass string, compressed bool) string {
	onOff := "OFF"
	if compressed {
		onOff = "ON"
	}
	return fmt.Sprintf("SET GLOBAL slave_compressed_protocol=%s;\n"+
		"CHANGE MASTER TO MASTER_HOST=%s, MASTER_PORT=%d, MASTER_USER=%s, MASTER_PASSWORD=%s, "+
		"MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=1;\n",
		onOff, quote(host), port, quote(user), quote(pass))
}

// ChangeMaster configures this server as a replica of host:port. Stop the slave first if
// it is running.
func (s *Server) ChangeMaster(ctx context.Context, host string, port int, user, pass string, compressed bool) error {
	if _, err := s.Exec(ctx, changeMasterSQL(host, port, user, pass, compressed)); err != nil {
		return fmt.Errorf("change master to %s:%d: %w", host, port, err)
	}
	return nil
}

// StartSlave starts the replica's IO and SQL threads.
func (s *Server) StartSlave(ctx context.Context) error {
	if _, err := s.Exec(ctx, "START SLAVE"); err != nil {
		return fmt.Errorf("start slave: %w", err)
	}
	return nil
}

// StopSlave stops the replica's threads; on stopped threads it is only a warning.
func (s *Server) StopSlave(ctx context.Context) error {
	if _, err := s.Exec(ctx, "STOP SLAVE"); err != nil {
		return fmt.Errorf("stop slave: %w", err)
	}
	return nil
}

// SlaveStatus returns SHOW SLAVE STATUS as column -> value (Slave_IO_Running,
// Seconds_Behind_Master, Last_IO_Error, Gtid_IO_Pos, ...).
func (s *Server) SlaveStatus(ctx context.Context) (map[string]string, error) {
	rows, err := s.Rows(ctx, "SHOW SLAVE STATUS")
	if err != nil {
		return nil, fmt.Errorf("slave status: %w", err)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("slave status: %w", ErrNoSlave)
	}
	return rows[0], nil
}

// WaitGTID blocks until this replica has applied pos (from the primary's GTIDPos) or
// timeout passes; it uses MASTER_GTID_WAIT, so there is no polling.
func (s *Server) WaitGTID(ctx context.Context, pos string, timeout time.Duration) error {
	if pos == "" {
		return nil
	}
	sql := fmt.Sprintf("SELECT MASTER_GTID_WAIT(%s, %.3f)", quote(pos), timeout.Seconds())
	ctx, cancel := context.WithTimeout(ctx, timeout+10*time.Second)
	defer cancel()
	out, err := s.Exec(ctx, sql)
	if err != nil {
		return fmt.Errorf("wait for gtid %s: %w", pos, err)
	}
	switch strings.TrimSpace(out) {
	case "0":
		return nil
	case "-1":
		return fmt.Errorf("wait for gtid %s: timed out after %s", pos, timeout)
	default:
		return fmt.Errorf("wait for gtid %s: unexpected result %q", pos, strings.TrimSpace(out))
	}
}
