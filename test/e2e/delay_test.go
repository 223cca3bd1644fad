package e2e

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/wirelab/wirelab/internal/cpuidle"
)

// sysbenchPointSelect runs oltp_point_select with one thread for secs seconds from the client
// host and returns the average latency in ms and the transaction count.
func sysbenchPointSelect(t *testing.T, state string, secs int) (avgMs float64, txns int) {
	t.Helper()
	sb := wl(t, state, "exec", "client", "--", "sh", "-c",
		`sysbench oltp_point_select --mysql-host=$WIRELAB_SERVER_HOST --mysql-port=$WIRELAB_SERVER_PORT `+
			`--mysql-user=$WIRELAB_DB_USER --mysql-password=$WIRELAB_DB_PASSWORD --mysql-db=$WIRELAB_DB_NAME `+
			`--tables=1 --table-size=1000 --threads=1 --time=`+strconv.Itoa(secs)+` run`)
	m := regexp.MustCompile(`transactions:\s+(\d+)\s+\(`).FindStringSubmatch(sb)
	a := regexp.MustCompile(`(?m)^\s*avg:\s+([\d.]+)`).FindStringSubmatch(sb)
	if m == nil || a == nil {
		t.Fatalf("sysbench output without transactions or avg latency:\n%s", sb)
	}
	txns, _ = strconv.Atoi(m[1])
	avgMs, _ = strconv.ParseFloat(a[1], 64)
	if txns == 0 {
		t.Fatalf("sysbench made no transactions:\n%s", sb)
	}
	return avgMs, txns
}

// TestDelayAddsRoundTripToQueries: with --delay 25ms (one way) a
// one-thread point select, one query per transaction, takes 50 ms longer on average than on
// the bare wire. The bare-wire baseline is measured in the same lab right after (`link set
// --rtt 0`), so the server's own latency on this machine cancels out.
func TestDelayAddsRoundTripToQueries(t *testing.T) {
	skipUnlessRoot(t)
	state := t.TempDir()
	idleBefore, idleErr := cpuidle.Limit(cpuidle.System)
	wl(t, state, "up", "--delay", "25ms")
	id := labRunID(t, state)
	if id == "" {
		t.Fatal("no lab state after up")
	}
	t.Cleanup(func() {
		wl(t, state, "down", "--lab", id)
		assertGone(t, id)
		// The delayer's request on the CPUs' idle states went with it.
		if after, err := cpuidle.Limit(cpuidle.System); idleErr == nil && err == nil && after != idleBefore {
			t.Errorf("CPU latency limit %d µs after down, want %d as before up", after, idleBefore)
		}
	})
	st := wl(t, state, "status")
	if !strings.Contains(st, "delay 25ms") {
		t.Errorf("status does not show the delay:\n%s", st)
	}
	// The userspace delayer keeps the CPUs awake while it runs (netem needs no such thing).
	if lim, err := cpuidle.Limit(cpuidle.System); idleErr == nil && err == nil && strings.Contains(st, "nfqueue") && lim != 0 {
		t.Errorf("CPU latency limit %d µs with the delayer running, want 0", lim)
	}
	wl(t, state, "exec", "client", "--", "sh", "-c",
		`sysbench oltp_point_select --mysql-host=$WIRELAB_SERVER_HOST --mysql-port=$WIRELAB_SERVER_PORT `+
			`--mysql-user=$WIRELAB_DB_USER --mysql-password=$WIRELAB_DB_PASSWORD --mysql-db=$WIRELAB_DB_NAME `+
			`--tables=1 --table-size=1000 prepare`)

	delayed, n1 := sysbenchPointSelect(t, state, 5)
	wl(t, state, "link", "set", "--lab", id, "--rtt", "0")
	bare, n0 := sysbenchPointSelect(t, state, 5)
	added := delayed - bare
	t.Logf("point select, 1 thread: %.3f ms avg with delay 25ms (%d txns), %.3f ms bare (%d txns): +%.3f ms",
		delayed, n1, bare, n0, added)
	// The delayer never releases a packet early by more than its 0.1 ms wake-up margin per
	// direction; late by the scheduling latency of a loaded machine. The upper bound is the
	// check's RTT tolerance (0.3 ms + 5%) plus 2 ms for load on a shared 2-core machine.
	if added < 49.5 || added > 50+0.3+2.5+2 {
		t.Errorf("delay 25ms added %.3f ms to a point select, want 50 ms (49.5-54.8)", added)
	}
	if n1 > 5*1000/50+5 {
		t.Errorf("%d transactions in 5 s at one per 50 ms round trip: the delay is not on every query", n1)
	}
}
