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

func TestBaseBackupArgsSlot(t *testing.T) {
	u := Upstream{Host: "198.18.0.2", Port: 5432, User: "repl", Slot: "wirelab_replica"}
	args := baseBackupArgs(u, newLayout("/lab/replica"))
	if got := strings.Join(args[len(args)-2:], " "); got != "--create-slot --slot=wirelab_replica" {
		t.Errorf("slot args = %q", got)
	}
}

func TestParseReceiver(t *testing.T) {
	// psql -A -t -F '\t' output of the Receiver query on a standby streaming through a tunnel.
	r, ok := parseReceiver("streaming\t127.0.0.1\t3307\t0/3162A40\n")
	if !ok || r != (Receiver{Status: "streaming", Host: "127.0.0.1", Port: 3307, WrittenLSN: "0/3162A40"}) {
		t.Errorf("parseReceiver = %+v, %v", r, ok)
	}
	if _, ok := parseReceiver(""); ok {
		t.Error("no WAL receiver: ok")
	}
}

func TestParseLSN(t *testing.T) {
	for in, want := range map[string]uint64{"0/3000148": 0x3000148, "16/B374D848": 0x16<<32 | 0xB374D848, " 0/0\n": 0} {
		if got, err := ParseLSN(in); err != nil || got != want {
			t.Errorf("ParseLSN(%q) = %#x, %v; want %#x", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "3000148", "0/xyz", "1/2/3", "100000000/0"} {
		if _, err := ParseLSN(bad); err == nil {
			t.Errorf("ParseLSN(%q) accepted", bad)
		}
	}
}
