package livemetrics

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

const prefix = "wirelab_run_"

// labelNames are Labels as Prometheus labels, in values' order.
var labelNames = []string{"study", "series", "channel", "threads", "link"}

func (l Labels) values() []string {
	return []string{l.Study, l.Series, l.Channel, strconv.Itoa(l.Threads), l.Link}
}

// metric is one metric of a point: read from it at each scrape; running says it is served
// only while the point is measured (a gauge of its current second).
type metric struct {
	name, help string
	typ        prometheus.ValueType
	extra      string // a label of its own (direction, side), "" for none
	running    bool
	values     func(p *point) []value
}

type value struct {
	label string
	v     float64
}

func one(v float64) []value { return []value{{"", v}} }

const counter, gauge = prometheus.CounterValue, prometheus.GaugeValue

var metrics = []metric{
	{"transactions_total", "Transactions the load driver reported, from its per-second lines (each line's TPS × its interval), summed over its client hosts.", counter, "", false,
		func(p *point) []value { return one(p.transactions) }},
	{"queries_total", "Queries the load driver reported, from its per-second lines.", counter, "", false,
		func(p *point) []value { return one(p.queries) }},
	{"errors_total", "Errors the load driver reported (failed or retried transactions), from its per-second lines.", counter, "", false,
		func(p *point) []value { return one(p.errors) }},
	{"wire_bytes_total", "Bytes on the shaped wire: up is client to server, down server to client.", counter, "direction", false,
		func(p *point) []value { return []value{{"up", p.wireUp}, {"down", p.wireDown}} }},
	{"cpu_seconds_total", "CPU time of the database server's processes (server), of the load driver's (client), and of the whole machine the sides share (machine).", counter, "side", false,
		func(p *point) []value {
			return []value{{"server", p.cpuServer}, {"client", p.cpuClient}, {"machine", p.cpuTotal}}
		}},
	{"delay_line_cpu_seconds_total", "The delay line's CPU time, all of it: the lab's cost, as the point's results count its lab cost.", counter, "", false,
		func(p *point) []value { return one(p.delayLine) }},
	{"point_running", "1 while the point is measured, 0 once it is done.", gauge, "", false,
		func(p *point) []value {
			if p.running {
				return one(1)
			}
			return one(0)
		}},
	{"tps", "Transactions per second in the load driver's latest per-second line, summed over its client hosts; served while the point runs.", gauge, "", true,
		func(p *point) []value { return one(p.driver.TPS) }},
	{"latency_p95_seconds", "The 95th percentile latency in the load driver's latest per-second line (sysbench; the largest of its client hosts'); served while the point runs.", gauge, "", true,
		func(p *point) []value { return nonZero(p.driver.LatP95Ms / 1000) }},
	{"latency_mean_seconds", "The mean latency in the load driver's latest per-second line (pgbench); served while the point runs.", gauge, "", true,
		func(p *point) []value { return nonZero(p.driver.LatAvgMs / 1000) }},
}

// nonZero is v, or nothing for a figure the driver does not report (0).
func nonZero(v float64) []value {
	if v == 0 {
		return nil
	}
	return one(v)
}

const (
	histogramName = prefix + "latency_seconds"
	cpusName      = prefix + "machine_cpus"
)

// collector reads the registry's points at each scrape.
type collector struct {
	r          *Registry
	descs      []*prometheus.Desc
	hist, cpus *prometheus.Desc
}

func newCollector(r *Registry) *collector {
	c := &collector{r: r}
	for _, m := range metrics {
		names := labelNames
		if m.extra != "" {
			names = append(append([]string(nil), labelNames...), m.extra)
		}
		c.descs = append(c.descs, prometheus.NewDesc(prefix+m.name, m.help, names, nil))
	}
	c.hist = prometheus.NewDesc(histogramName, "Latency of the load driver's measured transactions (warm-up excluded), from its own histogram: added once per driver when it ends, as the drivers give theirs then; sysbench's buckets are placed to within 1%.", labelNames, nil)
	c.cpus = prometheus.NewDesc(cpusName, "CPUs of the machine the delay line runs on: rate(wirelab_run_delay_line_cpu_seconds_total) over this is the lab's share of it.", nil, nil)
	return c
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
	ch <- c.hist
	ch <- c.cpus
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	c.r.mu.Lock()
	defer c.r.mu.Unlock()
	ch <- prometheus.MustNewConstMetric(c.cpus, gauge, float64(c.r.cpus))
	for l, p := range c.r.points {
		lv := l.values()
		for i, m := range metrics {
			if m.running && !p.running {
				continue
			}
			for _, v := range m.values(p) {
				vals := lv
				if m.extra != "" {
					vals = append(append([]string(nil), lv...), v.label)
				}
				ch <- prometheus.MustNewConstMetric(c.descs[i], m.typ, v.v, vals...)
			}
		}
		if p.hist.n > 0 {
			ch <- prometheus.MustNewConstHistogram(c.hist, p.hist.n, p.hist.sum, p.hist.cumulative(), lv...)
		}
	}
}

// metricNames are the names of every metric a Registry serves, the histogram's series
// (_bucket, _sum, _count) among them.
func metricNames() []string {
	names := []string{cpusName, histogramName + "_bucket", histogramName + "_sum", histogramName + "_count"}
	for _, m := range metrics {
		names = append(names, prefix+m.name)
	}
	return names
}
