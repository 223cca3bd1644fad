package mariadb

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/dbserver"
	"github.com/wirelab/wirelab/internal/execx"
)

func fakeServer(f *execx.Fake) *Server {
	return &Server{Socket: "/lab/srv/mysqld.sock", runner: f}
}

func TestExecUsesSocketAsRootWithoutDefaults(t *testing.T) {
	f := &execx.Fake{Responses: map[string]string{"mariadb": "1\n"}}
	out, err := fakeServer(f).Exec(context.Background(), "SELECT 1")
	if err != nil || out != "1\n" {
		t.Fatalf("Exec = %q, %v", out, err)
	}
	want := "mariadb --no-defaults --protocol=socket --socket=/lab/srv/mysqld.sock --user=root " +
		"--batch --raw --connect-timeout=5 --skip-ssl --skip-column-names --execute=SELECT 1"
	if got := f.Lines(); len(got) != 1 || got[0] != want {
		t.Errorf("calls:\n got %q\nwant %q", got, want)
	}
}

func TestExecWrapsErrors(t *testing.T) {
	boom := errors.New("ERROR 2002 (HY000): Can't connect")
	f := &execx.Fake{Errors: map[string]error{"mariadb": boom}}
	_, err := fakeServer(f).Exec(context.Background(), "SELECT 1")
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), `"SELECT 1"`) {
		t.Errorf("err = %v", err)
	}
}

// TestParseBatch reads the mariadb client's batch output with the shared parser.
func TestParseBatch(t *testing.T) {
	// `mariadb --batch` output of SHOW SLAVE STATUS, cut to a few columns.
	out := "Slave_IO_State\tMaster_Host\tMaster_Port\tLast_IO_Error\tGtid_IO_Pos\n" +
		"Waiting for master to send event\t127.0.0.1\t40001\t\t0-1-5\n"
	rows := dbserver.ParseTable(out)
	if len(rows) != 1 {
		t.Fatalf("rows = %v", rows)
	}
	r := rows[0]
	if r["Master_Port"] != "40001" || r["Last_IO_Error"] != "" || r["Gtid_IO_Pos"] != "0-1-5" {
		t.Errorf("row = %v", r)
	}
	if dbserver.ParseTable("") != nil || dbserver.ParseTable("Col\n") != nil {
		t.Error("header-only output should have no rows")
	}
}

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		"plain":        "'plain'",
		"it's":         `'it\'s'`,
		`back\slash`:   `'back\\slash'`,
		"new\nline":    `'new\nline'`,
		"%":            "'%'",
		"x'); DROP --": `'x\'); DROP --'`,
	} {
		if got := quote(in); got != want {
			t.Errorf("quote(%q) = %s, want %s", in, got, want)
		}
	}
	if got := ident("a`b"); got != "`a``b`" {
		t.Errorf("ident = %s", got)
	}
}

func TestReplicationSQL(t *testing.T) {
	f := &execx.Fake{Responses: map[string]string{}}
	s := fakeServer(f)
	ctx := context.Background()
	if err := s.ChangeMaster(ctx, "198.18.0.2", 3306, "repl", "p'w", true); err != nil {
		t.Fatal(err)
	}
	if err := s.StartSlave(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.StopSlave(ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.CreateReplUser(ctx); err != nil {
		t.Fatal(err)
	}
	lines := f.Lines()
	want := []string{
		"SET GLOBAL slave_compressed_protocol=ON;\nCHANGE MASTER TO MASTER_HOST='198.18.0.2', " +
			`MASTER_PORT=3306, MASTER_USER='repl', MASTER_PASSWORD='p\'w', MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=1;`,
		"--execute=START SLAVE",
		"--execute=STOP SLAVE",
		"SET SESSION sql_log_bin=0;\nCREATE OR REPLACE USER 'repl'@'%' IDENTIFIED BY '",
	}
	for i, w := range want {
		if !strings.Contains(lines[i], w) {
			t.Errorf("call %d:\n got %q\nwant it to contain %q", i, lines[i], w)
		}
	}
	if !strings.Contains(changeMasterSQL("h", 1, "u", "p", false), "slave_compressed_protocol=OFF") {
		t.Error("uncompressed ChangeMaster must turn compression off")
	}
}

func TestWaitGTID(t *testing.T) {
	ctx := context.Background()
	for out, ok := range map[string]bool{"0\n": true, "-1\n": false, "NULL\n": false} {
		f := &execx.Fake{Responses: map[string]string{"mariadb": out}}
		err := fakeServer(f).WaitGTID(ctx, "0-1-42", 2*time.Second)
		if (err == nil) != ok {
			t.Errorf("MASTER_GTID_WAIT returned %q: err = %v", out, err)
		}
		if l := f.Lines(); !strings.HasSuffix(l[0], "SELECT MASTER_GTID_WAIT('0-1-42', 2.000)") {
			t.Errorf("call = %q", l[0])
		}
	}
	if err := fakeServer(&execx.Fake{}).WaitGTID(ctx, "", time.Second); err != nil {
		t.Errorf("empty position must not wait: %v", err)
	}
}

func TestSlaveStatusNotConfigured(t *testing.T) {
	f := &execx.Fake{Responses: map[string]string{"mariadb": ""}}
	if _, err := fakeServer(f).SlaveStatus(context.Background()); !errors.Is(err, ErrNoSlave) {
		t.Errorf("err = %v, want ErrNoSlave", err)
	}
}
