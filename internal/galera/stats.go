package galera

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// NodeStats are one node's wsrep status variables, as read (counters since the node
// started, averages since the last FLUSH STATUS).
type NodeStats struct {
	ClusterSize   int    // wsrep_cluster_size
	ClusterStatus string // wsrep_cluster_status: Primary when the node has quorum
	State         string // wsrep_local_state_comment: Synced, Joining, Donor/Desynced ...
	Ready         bool   // wsrep_ready
	LastCommitted int64  // wsrep_last_committed: the cluster-wide seqno applied here

	FlowControlPausedNs int64 // wsrep_flow_control_paused_ns: time paused, counter
	// FlowControlPaused is wsrep_flow_control_paused: the fraction of time since the
	// last FLUSH STATUS that replication was paused by flow control.
	FlowControlPaused float64
	FlowControlSent   int64 // wsrep_flow_control_sent: pause requests this node sent
	FlowControlRecv   int64 // wsrep_flow_control_recv: pause requests received (own included)

	SendQueueAvg float64 // wsrep_local_send_queue_avg, since the last FLUSH STATUS
	RecvQueueAvg float64 // wsrep_local_recv_queue_avg, since the last FLUSH STATUS
	CertFailures int64   // wsrep_local_cert_failures: local transactions failing certification
	BFAborts     int64   // wsrep_local_bf_aborts: local transactions aborted by replicated ones

	Replicated      int64 // wsrep_replicated: write sets sent
	ReplicatedBytes int64 // wsrep_replicated_bytes
	Received        int64 // wsrep_received: write sets received
	ReceivedBytes   int64 // wsrep_received_bytes
}

// parseStatus reads `SHOW GLOBAL STATUS LIKE 'wsrep%'` batch output (name TAB value per
// line). A variable the server lacks leaves its field zero; a value that does not parse
// is an error naming it.
func parseStatus(out string) (NodeStats, error) {
	var s NodeStats
	var errs []string
	i64 := func(v string, dst *int64, name string) {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			errs = append(errs, name+"="+v)
		}
		*dst = n
	}
	f64 := func(v string, dst *float64, name string) {
		n, err := strconv.ParseFloat(v, 64)
		if err != nil {
			errs = append(errs, name+"="+v)
		}
		*dst = n
	}
	for _, line := range strings.Split(out, "\n") {
		name, v, ok := strings.Cut(strings.TrimRight(line, "\r"), "\t")
		if !ok {
			continue
		}
		switch name = strings.ToLower(name); name {
		case "wsrep_cluster_size":
			var n int64
			i64(v, &n, name)
			s.ClusterSize = int(n)
		case "wsrep_cluster_status":
			s.ClusterStatus = v
		case "wsrep_local_state_comment":
			s.State = v
		case "wsrep_ready":
			s.Ready = v == "ON"
		case "wsrep_last_committed":
			i64(v, &s.LastCommitted, name)
		case "wsrep_flow_control_paused_ns":
			i64(v, &s.FlowControlPausedNs, name)
		case "wsrep_flow_control_paused":
			f64(v, &s.FlowControlPaused, name)
		case "wsrep_flow_control_sent":
			i64(v, &s.FlowControlSent, name)
		case "wsrep_flow_control_recv":
			i64(v, &s.FlowControlRecv, name)
		case "wsrep_local_send_queue_avg":
			f64(v, &s.SendQueueAvg, name)
		case "wsrep_local_recv_queue_avg":
			f64(v, &s.RecvQueueAvg, name)
		case "wsrep_local_cert_failures":
			i64(v, &s.CertFailures, name)
		case "wsrep_local_bf_aborts":
			i64(v, &s.BFAborts, name)
		case "wsrep_replicated":
			i64(v, &s.Replicated, name)
		case "wsrep_replicated_bytes":
			i64(v, &s.ReplicatedBytes, name)
		case "wsrep_received":
			i64(v, &s.Received, name)
		case "wsrep_received_bytes":
			i64(v, &s.ReceivedBytes, name)
		}
	}
	if len(errs) > 0 {
		return s, fmt.Errorf("parse wsrep status: not a number: %s", strings.Join(errs, ", "))
	}
	return s, nil
}

// synced reports whether the node is a full member of a two-node primary component.
func (s NodeStats) synced(size int) bool {
	return s.ClusterSize == size && s.ClusterStatus == "Primary" && s.State == "Synced" && s.Ready
}

// Stats is a reading of both nodes at one moment.
type Stats struct {
	At      time.Time
	Primary NodeStats // the node in the server host, which the clients write to
	Replica NodeStats // the node across the wire
}

// NodeWindow is what one node did between two readings.
type NodeWindow struct {
	// FlowControlPaused is the fraction of the window replication was paused by flow
	// control, from the paused-time counter (not the server's own fraction, whose
	// period is "since the last FLUSH STATUS").
	FlowControlPaused   float64 `json:"flow_control_paused"`
	FlowControlPausedNs int64   `json:"flow_control_paused_ns"`
	FlowControlSent     int64   `json:"flow_control_sent"`
	FlowControlRecv     int64   `json:"flow_control_recv"`
	// SendQueueAvg and RecvQueueAvg are the server's averages at the end of the window:
	// they cover the window when it began with Cluster.Begin (FLUSH STATUS).
	SendQueueAvg    float64 `json:"send_queue_avg"`
	RecvQueueAvg    float64 `json:"recv_queue_avg"`
	CertFailures    int64   `json:"cert_failures"`
	BFAborts        int64   `json:"bf_aborts"`
	Replicated      int64   `json:"replicated"`
	ReplicatedBytes int64   `json:"replicated_bytes"`
	Received        int64   `json:"received"`
	ReceivedBytes   int64   `json:"received_bytes"`
}

// Window is what the cluster did between two readings: a measurement point's galera
// figures.
type Window struct {
	Seconds float64    `json:"seconds"`
	Primary NodeWindow `json:"primary"`
	Replica NodeWindow `json:"replica"`
}

// Since is the window from before to s. Counters are differences; a counter that went
// down (FLUSH STATUS resets some) counts from zero.
func (s Stats) Since(before Stats) Window {
	w := Window{Seconds: s.At.Sub(before.At).Seconds()}
	w.Primary = nodeWindow(before.Primary, s.Primary, w.Seconds)
	w.Replica = nodeWindow(before.Replica, s.Replica, w.Seconds)
	return w
}

func nodeWindow(a, b NodeStats, seconds float64) NodeWindow {
	d := func(x, y int64) int64 {
		if y < x {
			return y
		}
		return y - x
	}
	w := NodeWindow{
		FlowControlPausedNs: d(a.FlowControlPausedNs, b.FlowControlPausedNs),
		FlowControlSent:     d(a.FlowControlSent, b.FlowControlSent),
		FlowControlRecv:     d(a.FlowControlRecv, b.FlowControlRecv),
		SendQueueAvg:        b.SendQueueAvg,
		RecvQueueAvg:        b.RecvQueueAvg,
		CertFailures:        d(a.CertFailures, b.CertFailures),
		BFAborts:            d(a.BFAborts, b.BFAborts),
		Replicated:          d(a.Replicated, b.Replicated),
		ReplicatedBytes:     d(a.ReplicatedBytes, b.ReplicatedBytes),
		Received:            d(a.Received, b.Received),
		ReceivedBytes:       d(a.ReceivedBytes, b.ReceivedBytes),
	}
	if seconds > 0 {
		w.FlowControlPaused = float64(w.FlowControlPausedNs) / (seconds * 1e9)
	}
	return w
}
