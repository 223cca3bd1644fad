package postgres

import (
	"strings"
	"testing"
)

func TestEnv(t *testing.T) {
	s := &Server{Host: "198.18.0.2", Port: 5432, User: "sbtest", Password: "pw", DB: "sbtest", CertDir: "/lab/srv/certs"}
	want := "WIRELAB_ENGINE=postgres PGHOST=198.18.0.2 PGPORT=5432 PGUSER=sbtest PGPASSWORD=pw " +
		"PGDATABASE=sbtest PGSSLMODE=disable PGSSLROOTCERT=/lab/srv/certs/ca.pem"
	if got := strings.Join(s.Env(""), " "); got != want {
		t.Errorf("Env(\"\"):\n got %s\nwant %s", got, want)
	}
	if got := strings.Join(s.Env(SSLRequire), " "); !strings.Contains(got, " PGSSLMODE=require ") {
		t.Errorf("Env(require) = %s", got)
	}
}

func TestParseSettings(t *testing.T) {
	// Real psql output of settingsQuery against the test server.
	got, err := parseSettings("15.18 (Debian 15.18-0+deb12u1)\ton\t100\toff\toff\treplica\t128MB\t10\t200ms\t1min\ton\t5min\t1GB\n")
	want := Settings{Version: "15.18 (Debian 15.18-0+deb12u1)", SSL: true, MaxConnections: 100,
		SynchronousCommit: "off", WALCompression: "off", WALLevel: "replica", SharedBuffers: "128MB",
		MaxWALSenders: 10, WALWriterDelay: "200ms", WALReceiverTimeout: "1min", FullPageWrites: true, CheckpointTimeout: "5min", MaxWALSize: "1GB"}
	if err != nil || got != want {
		t.Errorf("parseSettings = %+v, %v", got, err)
	}
	for _, bad := range []string{"", "15\ton\n", "15\ton\tmany\toff\toff\treplica\t1GB\t10\t200ms\t1min\ton\t5min\t1GB\n",
		"15\ton\t100\toff\toff\treplica\t1GB\tten\t200ms\t1min\ton\t5min\t1GB\n"} {
		if _, err := parseSettings(bad); err == nil {
			t.Errorf("parseSettings(%q) accepted", bad)
		}
	}
}
