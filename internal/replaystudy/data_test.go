package replaystudy

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/execx"
	"github.com/wirelab/wirelab/internal/postgres"
)

func TestMariaDBCommandLines(t *testing.T) {
	lab := socketArgs("/lab/srv/mysqld.sock")
	if got := strings.Join(clientArgs(lab, "sbtest"), " "); got != "--no-defaults --protocol=socket --socket=/lab/srv/mysqld.sock --user=root --skip-ssl --batch --database=sbtest" {
		t.Errorf("the lab's client: %s", got)
	}
	if got := strings.Join(dumpArgs(lab, "sbtest", true), " "); !strings.HasSuffix(got, "--single-transaction --triggers --routines sbtest") {
		t.Errorf("the lab's dump: %s", got)
	}
	ext := tcpArgs(engine.Conn{Host: "10.0.0.5", Port: 3307, User: "bench", Password: "s3cret"})
	got := strings.Join(dumpArgs(ext, "wl", false), " ")
	if got != "--no-defaults --protocol=tcp --host=10.0.0.5 --port=3307 --user=bench --single-transaction --triggers wl" || strings.Contains(got, "s3cret") {
		t.Errorf("an existing server's dump: %s", got)
	}
	if strings.Join(quoteMySQL([]string{"a`b", "c"}), ",") != "`a``b`,`c`" {
		t.Errorf("quote: %v", quoteMySQL([]string{"a`b", "c"}))
	}
}

func TestPostgresStatements(t *testing.T) {
	if got := strings.Join(pristineStatements("sbtest"), "; "); got != `DROP DATABASE IF EXISTS "sbtest_replay_pristine"; CREATE DATABASE "sbtest_replay_pristine" TEMPLATE "sbtest"` {
		t.Errorf("snapshot: %s", got)
	}
	if got := strings.Join(resetStatements("sbtest"), "; "); got != `DROP DATABASE IF EXISTS "sbtest" WITH (FORCE); CREATE DATABASE "sbtest" TEMPLATE "sbtest_replay_pristine"` {
		t.Errorf("reset: %s", got)
	}
	c := psqlLoad("/usr/lib/postgresql/15/bin", &postgres.Server{SocketDir: "/lab/run", Port: 5432, User: "sbtest", Password: "pw", DB: "sbtest"}, "/d/app.sql")
	if c.name != "/usr/lib/postgresql/15/bin/psql" || !strings.Contains(strings.Join(c.args, " "), "-v ON_ERROR_STOP=1 -h /lab/run -p 5432 -U sbtest -d sbtest -f /d/app.sql") ||
		strings.Contains(strings.Join(c.args, " "), "pw") || c.env[0] != "PGPASSWORD=pw" {
		t.Errorf("psql: %+v", c)
	}
}

// TestRunWithFile: a client reads a file as its input, or writes one as its output,
// whatever the file's name; a failure carries what the client said.
func TestRunWithFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a dir with 'quotes' and spaces")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	in, out := filepath.Join(dir, "in $HOME.sql"), filepath.Join(dir, "out.sql")
	os.WriteFile(in, []byte("select 1;\n"), 0o644)
	l := execx.Local{Dir: dir}
	if err := runWithFile(context.Background(), l, command{name: "cat"}, in, false); err != nil {
		t.Fatal(err)
	}
	if err := runWithFile(context.Background(), l, command{name: "sh", args: []string{"-c", `printf '%s' "$X"`}, env: []string{"X=kept"}}, out, true); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(out); string(b) != "kept" {
		t.Errorf("written %q", b)
	}
	err := runWithFile(context.Background(), l, command{name: "sh", args: []string{"-c", "echo 'ERROR 1064 at line 3' >&2; exit 1"}}, in, false)
	if err == nil || !strings.Contains(err.Error(), "ERROR 1064 at line 3") {
		t.Errorf("a failing client: %v", err)
	}
}
