package compare

import (
	"fmt"
	"strings"

	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/result"
)

// Key is what two points must share to be compared: the conditions they ran under.
type Key struct {
	Engine   string  `json:"engine"` // "mariadb", "postgres"
	Driver   string  `json:"driver"` // "sysbench", "pgbench"
	Workload string  `json:"workload"`
	Threads  int     `json:"threads"`
	RateBps  int64   `json:"link_rate_bps"` // 0 = unlimited
	DelayMs  float64 `json:"link_delay_ms"` // one way
	JitterMs float64 `json:"link_jitter_ms,omitempty"`
	LossPct  float64 `json:"link_loss_pct,omitempty"`
}

// keyOf is the point's key; the engine is the run's (files written before PostgreSQL
// name none: MariaDB), the driver sysbench when the point names none.
func keyOf(r *result.Run, p result.Point) Key {
	engine := "mariadb"
	if s := r.Environment.Server; s != nil && s.Engine != "" {
		engine = s.Engine
	}
	driver := p.Driver
	if driver == "" {
		driver = "sysbench"
	}
	return Key{Engine: engine, Driver: driver, Workload: p.Workload, Threads: p.Threads,
		RateBps: p.LinkRateBps, DelayMs: p.LinkDelayMs, JitterMs: p.LinkJitterMs, LossPct: p.LinkLossPct}
}

// field is one field of a Key as the refusal names it.
type field struct {
	name string
	text func(Key) string
}

var keyFields = []field{
	{"engine", func(k Key) string { return k.Engine }},
	{"driver", func(k Key) string { return k.Driver }},
	{"workload", func(k Key) string { return k.Workload }},
	{"threads", func(k Key) string { return fmt.Sprint(k.Threads) }},
	{"link_rate_bps", func(k Key) string { return link.FormatRate(k.RateBps) }},
	{"link_delay_ms", func(k Key) string { return fmt.Sprintf("%g ms", k.DelayMs) }},
	{"link_jitter_ms", func(k Key) string { return fmt.Sprintf("%g ms", k.JitterMs) }},
	{"link_loss_pct", func(k Key) string { return fmt.Sprintf("%g%%", k.LossPct) }},
}

// differences names the fields a and b differ in, with both values: "threads (8 vs 32)".
func differences(a, b Key) []string {
	var out []string
	for _, f := range keyFields {
		if va, vb := f.text(a), f.text(b); va != vb {
			out = append(out, fmt.Sprintf("%s (%s vs %s)", f.name, va, vb))
		}
	}
	return out
}

// String is the key as a row names it: link, delay, threads.
func (k Key) String() string {
	s := link.FormatRate(k.RateBps)
	if k.DelayMs > 0 {
		s += fmt.Sprintf(" %gms", k.DelayMs)
	}
	if k.JitterMs > 0 {
		s += fmt.Sprintf("±%gms", k.JitterMs)
	}
	if k.LossPct > 0 {
		s += fmt.Sprintf(" loss %g%%", k.LossPct)
	}
	unit := "thread"
	if k.Driver == "pgbench" {
		unit = "client"
	}
	if k.Threads != 1 {
		unit += "s"
	}
	return fmt.Sprintf("%s, %d %s", s, k.Threads, unit)
}

// describe is a point in a refusal: its series and key in full, "20mbit (20mbit, 1
// thread, oltp_read_only, mariadb/sysbench)".
func describe(series string, k Key) string {
	return series + " (" + strings.Join([]string{k.String(), k.Workload, k.Engine + "/" + k.Driver}, ", ") + ")"
}
