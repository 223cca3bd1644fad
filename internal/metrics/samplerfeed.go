package metrics

import (
	"errors"
	"time"
)

// checkFeeds refuses a role given both a feed and a local source: which one the series
// means would depend on the order of the code.
func (src Source) checkFeeds() error {
	fd := src.Feeds
	switch {
	case fd.Wire != nil && (src.UpIface != "" || src.DownIface != ""):
		return errors.New("wire: a feed and local interfaces both given")
	case fd.ServerCPU != nil && src.ServerPIDs != nil:
		return errors.New("server cpu: a feed and local pids both given")
	case fd.ClientCPU != nil && src.ClientPIDs != nil:
		return errors.New("client cpu: a feed and local pids both given")
	}
	return nil
}

func (s *Sampler) feedCollector(f *Feed, p part) collector {
	s.fed[p] = true
	return feedCollector{feed: f, part: p, tck: s.tck}
}

// feedRates sets the rates of the parts read from feeds over the agent's own interval:
// the time between the lines this tick and the previous one saw, by the agent's clock.
//
// Local time would not do. The local tick and the agent's lines are both once a second,
// at an arbitrary phase; when lines arrive close to the tick, a little jitter leaves one
// tick with no new line and the next with two, and rates over the local interval would
// read 0 and then twice the truth. Over the agent's interval the tick with two lines
// reads right; the tick with none repeats the part's previous rate, once (a feed that
// stays silent reads 0 from the second tick on, as a stopped agent should). Totals are
// differences of cumulative counters, exact either way.
func (s *Sampler) feedRates(sm *Sample, prev, cur, d snapshot) {
	var last *Sample
	if n := len(s.samples); n > 0 {
		last = &s.samples[n-1]
	}
	for p := range nParts {
		if !s.fed[p] {
			continue
		}
		from, to := prev.fedAt[p], cur.fedAt[p]
		switch {
		case from != 0 && to > from:
			setPartRates(sm, p, d, time.Duration(to-from).Seconds(), s.tck)
			s.held[p] = false
		case from != 0 && to == from && last != nil && !s.held[p]:
			copyPartRates(sm, *last, p)
			s.held[p] = true
		default: // no line before this tick, or silent for a second tick: nothing known
			setPartRates(sm, p, d, 0, s.tck)
			s.held[p] = false
		}
	}
}

// setPartRates sets part p's rates to its deltas over sec seconds; sec <= 0 sets zeros.
func setPartRates(sm *Sample, p part, d snapshot, sec, tck float64) {
	rate := func(v uint64) float64 {
		if sec <= 0 {
			return 0
		}
		return float64(v) / sec
	}
	switch p {
	case partWire:
		sm.UpBytesPerS, sm.DownBytesPerS = rate(d.upBytes), rate(d.downBytes)
		sm.UpPktsPerS, sm.DownPktsPerS = rate(d.upPkts), rate(d.downPkts)
	case partServer:
		sm.CPUServer = rate(d.cpuServer) / tck
	case partClient:
		sm.CPUClient = rate(d.cpuClient) / tck
	case partMachine:
		sm.CPUTotal = rate(d.cpuTotal) / tck
	}
}

func copyPartRates(sm *Sample, from Sample, p part) {
	switch p {
	case partWire:
		sm.UpBytesPerS, sm.DownBytesPerS = from.UpBytesPerS, from.DownBytesPerS
		sm.UpPktsPerS, sm.DownPktsPerS = from.UpPktsPerS, from.DownPktsPerS
	case partServer:
		sm.CPUServer = from.CPUServer
	case partClient:
		sm.CPUClient = from.CPUClient
	case partMachine:
		sm.CPUTotal = from.CPUTotal
	}
}
