package metrics

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/wirelab/wirelab/internal/execx"
)

// ipLinkCollector reads the wire counters with `ip [-n NS] -s -j link show`. It spawns a
// process per sample, so it is only used when Source.Runner asks for it; the procfs
// collector is the default.
type ipLinkCollector struct {
	run      execx.Runner
	ns       string
	up, down string
}

func (c *ipLinkCollector) collect(snap *snapshot) error {
	args := []string{"-s", "-j", "link", "show"}
	if c.ns != "" {
		args = append([]string{"-n", c.ns}, args...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), ipTimeout)
	defer cancel()
	out, err := c.run.Run(ctx, "ip", args...)
	if err != nil {
		return fmt.Errorf("read link counters in %q: %w", c.ns, err)
	}
	ifs, err := parseIPLinkJSON(out)
	if err != nil {
		return err
	}
	return wireCounts(ifs, c.up, c.down, snap)
}

// ipTimeout bounds one `ip` call, so a wedged command cannot stall sampling for long.
const ipTimeout = 5 * time.Second

func (c *ipLinkCollector) close() error { return nil }

type ipDirStats struct {
	Bytes   uint64 `json:"bytes"`
	Packets uint64 `json:"packets"`
}

type ipStats struct {
	RX ipDirStats `json:"rx"`
	TX ipDirStats `json:"tx"`
}

// parseIPLinkJSON parses `ip -s -j link show` output. iproute2 prints stats64 where the
// kernel has 64-bit counters and stats otherwise.
func parseIPLinkJSON(data []byte) (map[string]IfaceCounters, error) {
	var links []struct {
		Name    string   `json:"ifname"`
		Stats64 *ipStats `json:"stats64"`
		Stats   *ipStats `json:"stats"`
	}
	if err := json.Unmarshal(data, &links); err != nil {
		return nil, fmt.Errorf("parse ip -j link: %w", err)
	}
	out := make(map[string]IfaceCounters, len(links))
	for _, l := range links {
		st := l.Stats64
		if st == nil {
			st = l.Stats
		}
		if st == nil {
			return nil, fmt.Errorf("parse ip -j link: %s has no counters (missing -s?)", l.Name)
		}
		out[l.Name] = IfaceCounters{RxBytes: st.RX.Bytes, RxPackets: st.RX.Packets,
			TxBytes: st.TX.Bytes, TxPackets: st.TX.Packets}
	}
	return out, nil
}
