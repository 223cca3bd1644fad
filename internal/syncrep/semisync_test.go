package syncrep

import (
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/result"
)

func TestSemiSyncSQL(t *testing.T) {
	p, r := semiSyncSQL(true, "AFTER_SYNC", 60*time.Second)
	for _, want := range []string{"rpl_semi_sync_master_timeout = 60000", "rpl_semi_sync_master_wait_point = 'AFTER_SYNC'", "rpl_semi_sync_master_enabled = ON"} {
		if !strings.Contains(p, want) {
			t.Errorf("primary SQL %q lacks %q", p, want)
		}
	}
	if !strings.Contains(r, "rpl_semi_sync_slave_enabled = ON") || !strings.HasSuffix(r, "STOP SLAVE IO_THREAD; START SLAVE IO_THREAD") {
		t.Errorf("replica SQL %q: want semi-sync on, then the IO thread reconnected", r)
	}
	p, r = semiSyncSQL(false, "", 0)
	if p != "SET GLOBAL rpl_semi_sync_master_enabled = OFF" || !strings.Contains(r, "rpl_semi_sync_slave_enabled = OFF") {
		t.Errorf("off: primary %q, replica %q", p, r)
	}
	if got := (semiSync{wait: "AFTER_COMMIT"}).Name(); got != "semisync-after-commit" {
		t.Errorf("Name = %q", got)
	}
}

func TestParseSemiSync(t *testing.T) {
	st, err := parseSemiSync(map[string]string{"Rpl_semi_sync_master_status": "ON", "Rpl_semi_sync_master_yes_tx": "120",
		"Rpl_semi_sync_master_no_tx": "3", "Rpl_semi_sync_master_clients": "1"})
	if err != nil || st != (State{Replica: "ON", Waiting: true, SyncedTx: 120, AsyncTx: 3}) {
		t.Errorf("parseSemiSync = %+v, %v", st, err)
	}
	if _, err := parseSemiSync(map[string]string{}); err == nil {
		t.Error("no status variables: want an error")
	}
	if _, err := parseSemiSync(map[string]string{"Rpl_semi_sync_master_status": "OFF", "Rpl_semi_sync_master_yes_tx": "x"}); err == nil {
		t.Error("a counter that is not a number: want an error")
	}
}

func TestPgCommitSQL(t *testing.T) {
	got := strings.Join(pgCommitSQL("remote_apply"), "\n")
	want := "ALTER SYSTEM SET synchronous_standby_names = '\"wirelab-replica\"'\nALTER SYSTEM SET synchronous_commit = 'remote_apply'\nSELECT pg_reload_conf()"
	if got != want {
		t.Errorf("pgCommitSQL =\n%s\nwant\n%s", got, want)
	}
	for level, waits := range map[string]bool{"off": false, "local": false, "remote_write": true, "on": true, "remote_apply": true} {
		if (pgCommit{level: level}).Waits() != waits {
			t.Errorf("%s: Waits = %v, want %v", level, !waits, waits)
		}
	}
}

func TestFillSync(t *testing.T) {
	p := result.Point{TPS: 100, WireBytesPerSUp: 2000, WireBytesPerSDown: 48000, LatP50Ms: 101, LatP95Ms: 103, LatP99Ms: 110}
	cases := []struct {
		name     string
		m        Mode
		st0, st1 State
		fell     bool
		async    int64
	}{
		{"semi-sync held", semiSync{wait: "AFTER_SYNC"}, State{Replica: "ON", Waiting: true, SyncedTx: 10}, State{Replica: "ON", Waiting: true, SyncedTx: 610}, false, 0},
		{"semi-sync timed out", semiSync{wait: "AFTER_SYNC"}, State{Replica: "ON", Waiting: true, AsyncTx: 2}, State{Replica: "OFF", AsyncTx: 40}, true, 38},
		{"async commits though status back on", semiSync{wait: "AFTER_SYNC"}, State{Replica: "ON", Waiting: true}, State{Replica: "ON", Waiting: true, AsyncTx: 1}, true, 1},
		{"async never falls back", async{}, State{Replica: "OFF"}, State{Replica: "OFF"}, false, 0},
		{"pg standby not sync", pgCommit{level: "on"}, State{Replica: "sync", Waiting: true}, State{Replica: "async"}, true, 0},
		{"pg-local ignores the standby", pgCommit{level: "local"}, State{Replica: "sync"}, State{Replica: "sync"}, false, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var ss result.SyncStats
			fillSync(&ss, p, c.m, c.st0, c.st1)
			if ss.FellBack != c.fell || ss.AsyncTx != c.async {
				t.Errorf("FellBack %v AsyncTx %d, want %v %d", ss.FellBack, ss.AsyncTx, c.fell, c.async)
			}
			if ss.CommitP50Ms != 101 || ss.CommitP99Ms != 110 || ss.WireBytesPerTxn != 500 || ss.Replica != c.st1.Replica {
				t.Errorf("figures %+v: want commit p50 101, p99 110, 500 B/txn, replica %s", ss, c.st1.Replica)
			}
		})
	}
}
