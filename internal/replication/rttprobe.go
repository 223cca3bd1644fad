package replication

import (
	"context"
	"time"

	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/stats"
	"github.com/wirelab/wirelab/internal/study"
)

// RTTProbe measures the TCP echo round trip replica -> source across the wire once per
// wire condition, for the studies of the Pair (replication, sync). On a backend that
// cannot probe (not a study.RTTProber: real hosts) the points carry no measured RTT (Ms
// stays 0).
type RTTProbe struct {
	cond *link.Condition // the wire the last probe measured
	// Ms is the last probe's median round trip in milliseconds; 0 when it failed or
	// there was none.
	Ms float64
}

// Measure probes the wire e has now unless it probed this wire last, and says so on the
// progress line; source is the source's name in it ("source", "primary").
func (r *RTTProbe) Measure(ctx context.Context, e *study.Env, source string) {
	if r.cond != nil && *r.cond == e.Cond {
		return
	}
	c := e.Cond
	r.cond, r.Ms = &c, 0
	p, ok := e.Backend.(study.RTTProber)
	if !ok {
		e.Progressf("wire: %s", c)
		return
	}
	if rtts, err := p.ProbeRTT(ctx, 7, 5*time.Second); err == nil && len(rtts) > 0 {
		r.Ms = stats.Percentile(stats.DurationsMs(rtts), 50)
	} else {
		e.Logger.Warn("RTT probe across the wire failed", "err", err)
	}
	e.Progressf("wire: %s (TCP echo RTT %.2f ms, replica→%s)", c, r.Ms, source)
}
