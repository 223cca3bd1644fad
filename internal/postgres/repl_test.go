package postgres

import (
	"strings"
	"testing"
)

func TestBaseBackupArgs(t *testing.T) {
	u := Upstream{Host: "198.18.0.2", Port: 5432, User: "repl", Password: `p'w\`}
	got := strings.Join(baseBackupArgs(u, newLayout("/lab/replica")), " ")
	want := `--dbname=host='198.18.0.2' port='5432' user='repl' password='p\'w\\' sslmode='disable' application_name='wirelab-replica' ` +
		"--pgdata=/lab/replica/data --wal-method=stream --write-recovery-conf --checkpoint=fast --no-sync"
	if got != want {
		t.Errorf("baseBackupArgs:\n got %s\nwant %s", got, want)
	}
	u.SSLMode = SSLRequire
	if !strings.Contains(baseBackupArgs(u, newLayout("/x"))[0], "sslmode='require'") {
		t.Error("sslmode not passed on")
	}
}

func TestValidateUpstream(t *testing.T) {
	c := Config{Dir: "/x", BindAddress: "127.0.0.1", Upstream: &Upstream{Host: "198.18.0.2", Port: 5432}}
	if err := c.withDefaults().validate(); err == nil {
		t.Error("upstream without user accepted")
	}
	c.Upstream.User = "repl"
	if err := c.withDefaults().validate(); err != nil {
		t.Errorf("good upstream rejected: %v", err)
	}
}

func TestParseSenders(t *testing.T) {
	// psql -A -t -F '\t' output of the Senders query with one streaming standby.
	got := parseSenders("wirelab-replica\tstreaming\t0/3000148\t0/3000148\t0.412\n")
	if len(got) != 1 || got[0] != (Sender{Application: "wirelab-replica", State: "streaming",
		SentLSN: "0/3000148", ReplayLSN: "0/3000148", ReplayLagMs: 0.412}) {
		t.Errorf("parseSenders = %+v", got)
	}
	if got := parseSenders(""); len(got) != 0 {
		t.Errorf("no standbys: %+v", got)
	}
}
