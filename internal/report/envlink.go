package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/result"
)

// linkRows are the environment's link rows: one per link setting the run applied, in words
// and numbers ("20 Mbit/s each way, HTB, burst 25 kB, queue 100 packets"). Files without
// Environment.Link show the shaper and the condition as asked instead.
func linkRows(e result.Environment) [][]string {
	if len(e.Link) == 0 {
		return [][]string{{"shaper", orDash(e.Shaper)}, {"link asked", orDash(e.LinkAsApplied)}}
	}
	type setting struct {
		d      result.LinkDirection
		toward []string
	}
	var settings []*setting
	hosts := map[string]bool{}
	for _, d := range e.Link {
		hosts[d.Toward] = true
		key := d
		key.Toward, key.Iface = "", ""
		var s *setting
		for _, x := range settings {
			if x.d == key {
				s = x
			}
		}
		if s == nil {
			s = &setting{d: key}
			settings = append(settings, s)
		}
		s.toward = append(s.toward, d.Toward)
	}
	rows := make([][]string, len(settings))
	for i, s := range settings {
		label := "link"
		if len(settings) > 1 {
			label += " " + strconv.Itoa(i+1)
		}
		way := "each way"
		if len(s.toward) < len(hosts) {
			way = "toward " + strings.Join(s.toward, " and ")
		}
		rows[i] = []string{label, linkWords(s.d, way)}
	}
	return rows
}

// linkWords says what one link setting does to a direction: rate and HTB's sizing, then the
// delay line, e.g. "20 Mbit/s each way, HTB, burst 25 kB, queue 100 packets; delay 5 ms ±
// 1 ms, loss 0.1% by the NFQUEUE delayer (queue 1024 packets)".
func linkWords(d result.LinkDirection, way string) string {
	var parts []string
	if d.RateBps > 0 {
		s := rateWords(d.RateBps) + " " + way
		if d.BurstBytes > 0 {
			s += fmt.Sprintf(", HTB, burst %s, queue %d packets", bytesWords(d.BurstBytes), d.QueuePackets)
		}
		parts = append(parts, s)
	} else {
		parts = append(parts, "unlimited "+way)
	}
	if link.DirectionCondition(d).NeedsDelayLine() {
		s := fmt.Sprintf("delay %g ms one way", d.DelayMs)
		if d.JitterMs > 0 {
			s += fmt.Sprintf(" ± %g ms", d.JitterMs)
		}
		if d.LossPct > 0 {
			s += fmt.Sprintf(", loss %g%%", d.LossPct)
		}
		switch link.Shaper(d.Shaper).DelayLine() {
		case link.ShaperNfqueue:
			s += " by the NFQUEUE delayer"
		case link.ShaperNetem:
			s += " by netem"
		}
		if d.DelayQueuePackets > 0 {
			s += fmt.Sprintf(" (queue %d packets)", d.DelayQueuePackets)
		}
		parts = append(parts, s)
	} else if d.RateBps == 0 {
		parts[0] += ", no shaping"
	}
	return strings.Join(parts, "; ")
}

// rateWords is a link rate as people say it: "20 Mbit/s", "2.5 Mbit/s", "1 Gbit/s".
func rateWords(bps int64) string {
	v := float64(bps)
	for _, u := range []struct {
		div  float64
		name string
	}{{1e9, "Gbit/s"}, {1e6, "Mbit/s"}, {1e3, "kbit/s"}} {
		if v >= u.div {
			return strconv.FormatFloat(v/u.div, 'g', 3, 64) + " " + u.name
		}
	}
	return strconv.FormatInt(bps, 10) + " bit/s"
}

// bytesWords is a byte count in decimal units: "25 kB", "1.25 MB", "3.03 kB", "900 B".
func bytesWords(n int) string {
	v := float64(n)
	switch {
	case v >= 1e6:
		return strconv.FormatFloat(v/1e6, 'g', 3, 64) + " MB"
	case v >= 1e3:
		return strconv.FormatFloat(v/1e3, 'g', 3, 64) + " kB"
	}
	return strconv.Itoa(n) + " B"
}

// readBackBlock keeps the kernel's raw view of the link (tc qdiscs and classes, the
// delayer's iptables rules) out of the table, collapsed; nil when none was recorded.
func readBackBlock(e result.Environment) Block {
	if strings.TrimSpace(e.LinkAsReadBack) == "" {
		return nil
	}
	return Details{Summary: "Link as read back from the kernel (tc, iptables): raw, also in results.json",
		Text: e.LinkAsReadBack}
}
