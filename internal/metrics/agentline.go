package metrics

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
)

// AgentLine is what `wirelab agent sample` prints once per interval on a remote host:
// cumulative counters at one instant, by the host's own clock. Every counter only grows
// while one agent runs (the agent accumulates the deltas of counters that vanish or
// restart); a consumer takes differences of consecutive lines, as the local Sampler takes
// differences of snapshots.
type AgentLine struct {
	// UnixNano is when the wire counters were read, by the agent host's clock.
	UnixNano int64 `json:"unix_nano"`
	// Wire bytes and packets client->server (up) and server->client (down) since the
	// agent started.
	UpBytes   uint64 `json:"up_bytes"`
	DownBytes uint64 `json:"down_bytes"`
	UpPkts    uint64 `json:"up_pkts"`
	DownPkts  uint64 `json:"down_pkts"`
	// CPUTicks is the summed utime+stime of the watched processes since the agent started,
	// kept when a process exits; a process that starts later counts from its start.
	CPUTicks uint64 `json:"cpu_ticks"`
	// MachineTicks is the busy time of the whole host since boot (/proc/stat).
	MachineTicks uint64 `json:"machine_ticks"`
	// ClkTck is the unit of CPUTicks and MachineTicks, in ticks per second.
	ClkTck float64 `json:"clk_tck"`
	// WireGone is how many reads since the agent started found a wire counter (a shaped
	// class, an interface) missing: the shaping was gone then, and its bytes not counted.
	WireGone uint64 `json:"wire_gone,omitempty"`
}

// MarshalLine encodes l as one JSON object and a newline, the agent's output format.
func (l AgentLine) MarshalLine() ([]byte, error) {
	b, err := json.Marshal(l)
	if err != nil {
		return nil, fmt.Errorf("encode agent line: %w", err)
	}
	return append(b, '\n'), nil
}

// ParseAgentLine decodes one line of agent output. It refuses unknown fields, so an agent
// binary that does not match the consumer's fails loudly instead of reading as zeros.
func ParseAgentLine(s string) (AgentLine, error) {
	var l AgentLine
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		return AgentLine{}, fmt.Errorf("parse agent line %q: %w", truncate(s, 80), err)
	}
	if dec.More() {
		return AgentLine{}, fmt.Errorf("parse agent line %q: trailing data", truncate(s, 80))
	}
	if err := l.validate(); err != nil {
		return AgentLine{}, fmt.Errorf("parse agent line: %w", err)
	}
	return l, nil
}

func (l AgentLine) validate() error {
	if l.UnixNano <= 0 {
		return fmt.Errorf("unix_nano %d: want a time after 1970", l.UnixNano)
	}
	if !(l.ClkTck > 0) || math.IsInf(l.ClkTck, 0) {
		return fmt.Errorf("clk_tck %v: want ticks per second > 0", l.ClkTck)
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
