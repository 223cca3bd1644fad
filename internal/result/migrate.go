package result

import "fmt"

// migrate brings a decoded run of an older schema to the current one in memory. Schema 1
// kept the replication study's figures in a map of floats (booleans as 1/0); they become
// ReplicationStats.
func migrate(r *Run) error {
	switch r.Schema {
	case Schema:
		return nil
	case 1:
		for i := range r.Points {
			p := &r.Points[i]
			if p.Study == "replication" && p.schema1Extra != nil {
				p.Replication = replicationFromSchema1(p.schema1Extra)
			}
			p.schema1Extra = nil
		}
		r.Schema = Schema
		return nil
	}
	return fmt.Errorf("results.json schema %d: this wirelab reads schemas 1 and %d", r.Schema, Schema)
}

func replicationFromSchema1(ex map[string]float64) *ReplicationStats {
	return &ReplicationStats{
		RTTMs: ex["rtt_ms"], RTTMeasuredMs: ex["rtt_measured_ms"], TargetQPS: ex["target_qps"],
		LagMaxS: ex["lag_max_s"], LagP99S: ex["lag_p99_s"], LagMeanS: ex["lag_mean_s"],
		LagSlopeSPerS: ex["lag_slope_s_per_s"], LagFinalS: ex["lag_final_s"],
		LagP99LastHalfS: ex["lag_p99_last_half_s"], LagSamples: int(ex["lag_samples"]),
		LagReadFailures: int(ex["lag_read_failures"]), LoadS: ex["load_s"], CatchUpS: ex["catchup_s"],
		BinlogBytes: int64(ex["binlog_bytes"]), BinlogMbitS: ex["binlog_mbit_s"],
		WireDownBytesTotal: int64(ex["wire_down_bytes_total"]), WireUpBytesTotal: int64(ex["wire_up_bytes_total"]),
		WireBytesPerTxn: ex["wire_bytes_per_txn"], BinlogToWireRatio: ex["binlog_to_wire_ratio"],
		CPUMachine:    ex["cpu_machine"],
		SourceLimited: ex["source_limited"] == 1, Bounded: ex["bounded"] == 1,
		AbortedEarly: ex["aborted_early"] == 1, ChecksumOK: ex["checksum_ok"] == 1,
	}
}
