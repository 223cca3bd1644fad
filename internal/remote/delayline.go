package remote

import (
	"context"

	"github.com/wirelab/wirelab/internal/hosts"
	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/study"
)

// DelayLines implements study.DelayLineReader: the delay line of each client whose last
// shaping started one (a kernel without netem), its stats file read on the client over
// SSH, as the lab reads its delayer's on this machine.
func (b *Backend) DelayLines() []study.DelayLine {
	var out []study.DelayLine
	for i, c := range b.clients {
		l := b.links[i]
		if !l.Shaper().Uses(link.ShaperNfqueue) {
			continue
		}
		h, file := c.h, hosts.DelayerStatsFile(l.Dir)
		out = append(out, study.DelayLine{Host: c.inv.Name, Read: func(ctx context.Context) (link.DelayerStats, error) {
			raw, err := h.ReadFile(ctx, file)
			if err != nil {
				return link.DelayerStats{}, err
			}
			return link.ParseDelayerStats(c.inv.Name+":"+file, raw)
		}})
	}
	return out
}
