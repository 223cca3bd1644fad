package result

// ReplicationStats are the replication study's figures for one point: the load asked and
// the wire it crossed, the lag the replica showed, what the binlog and the wire carried,
// and whether the replica caught up with identical tables. Throughput (QPS), wire bytes
// per second and CPU are the point's own fields.
type ReplicationStats struct {
	RTTMs         float64 `json:"rtt_ms"`          // the wire's round trip as asked
	RTTMeasuredMs float64 `json:"rtt_measured_ms"` // TCP echo replica -> source, median
	TargetQPS     float64 `json:"target_qps"`      // the open-loop load; 0 = as fast as it goes

	LagMaxS         float64 `json:"lag_max_s"`
	LagP99S         float64 `json:"lag_p99_s"`
	LagMeanS        float64 `json:"lag_mean_s"`
	LagSlopeSPerS   float64 `json:"lag_slope_s_per_s"` // growth over the second half of the load
	LagFinalS       float64 `json:"lag_final_s"`
	LagP99LastHalfS float64 `json:"lag_p99_last_half_s"`
	LagSamples      int     `json:"lag_samples"`
	LagReadFailures int     `json:"lag_read_failures"`

	LoadS    float64 `json:"load_s"`    // how long the load ran (shorter when aborted)
	CatchUpS float64 `json:"catchup_s"` // from the end of the load until the replica caught up

	BinlogBytes        int64   `json:"binlog_bytes,omitempty"` // growth of the source's binlog over the load
	BinlogMbitS        float64 `json:"binlog_mbit_s,omitempty"`
	WireDownBytesTotal int64   `json:"wire_down_bytes_total"` // source -> replica, load and catch-up
	WireUpBytesTotal   int64   `json:"wire_up_bytes_total"`
	WireBytesPerTxn    float64 `json:"wire_bytes_per_txn,omitempty"` // through catch-up
	BinlogToWireRatio  float64 `json:"binlog_to_wire_ratio,omitempty"`
	CPUMachine         float64 `json:"cpu_machine"` // cores, whole machine

	SourceLimited bool `json:"source_limited"` // the source made < 90% of the target load
	Bounded       bool `json:"bounded"`        // lag stayed bounded (DefaultRule)
	AbortedEarly  bool `json:"aborted_early"`  // the load was stopped when lag passed --abort-lag
	ChecksumOK    bool `json:"checksum_ok"`    // caught up and CHECKSUM TABLE matched
}

// WireMbitS is the source -> replica wire rate over the load window, Mbit/s.
func (p Point) WireMbitS() float64 { return p.WireBytesPerSDown * 8 / 1e6 }

// Usable is the one rule for "do this point's numbers count": it was measured, and in the
// replication and sync studies the replica caught up with identical tables.
func (p Point) Usable() bool {
	return !p.Failed && (p.Replication == nil || p.Replication.ChecksumOK) && (p.Sync == nil || p.Sync.ChecksumOK)
}
