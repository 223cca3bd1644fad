package tunnel

import (
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// A metric of a tunnel end, read at each scrape from the same counters as the --stats line
// (Stats), so a ratio of the byte counters is the ratio the line prints. Every metric has
// the label role (entry or exit); direction is send (local peer → WAN, encoded here) or
// recv (WAN → local peer, decoded here).
type metric struct {
	name, help string
	typ        prometheus.ValueType
	label      string                      // the one variable label, "" for none
	values     func(s Stats) []metricValue // one per label value
}

type metricValue struct {
	label string
	v     float64
}

func one(v int64) []metricValue { return []metricValue{{"", float64(v)}} }

func byDirection(send, recv int64) []metricValue {
	return []metricValue{{"send", float64(send)}, {"recv", float64(recv)}}
}

const counter, gauge = prometheus.CounterValue, prometheus.GaugeValue

var metrics = []metric{
	{"raw_bytes_total", "Bytes of the local peers' connections, before compression: read here and sent to the WAN (send), or received from the WAN and written here (recv).", counter, "direction",
		func(s Stats) []metricValue { return byDirection(s.Send.RawBytes, s.Recv.RawBytes) }},
	{"wire_bytes_total", "Frame bytes on the WAN, frame headers included and TLS excluded: sent (send) or received (recv).", counter, "direction",
		func(s Stats) []metricValue { return byDirection(s.Send.WireBytes, s.Recv.WireBytes) }},
	{"zstd_frames_total", "Data frames compressed with zstd, sent (send) or received (recv).", counter, "direction",
		func(s Stats) []metricValue { return byDirection(s.Send.ZstdFrames, s.Recv.ZstdFrames) }},
	{"raw_frames_total", "Data frames sent (send) or received (recv) uncompressed.", counter, "direction",
		func(s Stats) []metricValue { return byDirection(s.Send.RawFrames, s.Recv.RawFrames) }},
	{"frames_flushed_total", "Frames sent, by why the sender closed them: size (the group reached --group-max-size), timeout (--group-timeout, or a mux frame's --group-wait, passed) or idle (the source had nothing more to read).", counter, "reason",
		func(s Stats) []metricValue {
			return []metricValue{{"size", float64(s.Flush.Size)}, {"timeout", float64(s.Flush.Timeout)}, {"idle", float64(s.Flush.Idle)}}
		}},
	{"zstd_level", "The zstd level of the last compressed frame sent on a mux link (0 before one).", gauge, "",
		func(s Stats) []metricValue { return one(int64(s.Mux.Level)) }},
	{"zstd_level_changes_total", "Changes of zstd level made by --level auto, all mux links.", counter, "",
		func(s Stats) []metricValue { return one(s.Mux.LevelChanges) }},
	{"zstd_window_bytes", "The zstd window of this end's sending direction on its mux links (0 before one).", gauge, "",
		func(s Stats) []metricValue { return one(int64(s.Mux.Window)) }},
	{"auto_switches_total", "Decisions of --compress auto that changed between raw and zstd frames.", counter, "",
		func(s Stats) []metricValue { return one(s.AutoSwitches) }},
	{"links_open", "Mux links (WAN connections carrying streams) open now.", gauge, "",
		func(s Stats) []metricValue { return one(s.Mux.LinksOpen) }},
	{"links_opened_total", "Mux links opened (entry) or accepted (exit).", counter, "",
		func(s Stats) []metricValue { return one(s.Mux.Links) }},
	{"streams_open", "Client connections open now, each a stream of a mux link or a WAN connection of its own.", gauge, "",
		func(s Stats) []metricValue { return one(s.ActiveConns) }},
	{"streams_total", "Client connections accepted (entry) or opened to the server (exit).", counter, "",
		func(s Stats) []metricValue { return one(s.Conns) }},
	{"streams_failed_total", "Client connections that ended with an error: a dial, a handshake, malformed input, a reset.", counter, "",
		func(s Stats) []metricValue { return one(s.Failed) }},
	{"stream_resets_total", "Client connections that ended in a reset: an error at either end, a failed mux link, a stop.", counter, "",
		func(s Stats) []metricValue { return one(s.StreamResets) }},
	{"credit_stalls_total", "Times a mux stream had bytes to send and no credit left: the other end's local peer was not taking them.", counter, "",
		func(s Stats) []metricValue { return one(s.Mux.CreditStalls) }},
	{"wan_rtt_seconds", "The WAN's smoothed round trip in the last TCP_INFO sample of a WAN socket (0 before one).", gauge, "",
		func(s Stats) []metricValue { return []metricValue{{"", s.Probe.RTT.Seconds()}} }},
	{"wan_min_rtt_seconds", "The WAN's lowest round trip in the last TCP_INFO sample of a WAN socket (0 before one).", gauge, "",
		func(s Stats) []metricValue { return []metricValue{{"", s.Probe.MinRTT.Seconds()}} }},
	{"wan_drain_rate_bytes_per_second", "The rate a mux link's WAN connection delivers bytes at, as --level auto reckons it (the last link to decide; 0 before it measures).", gauge, "",
		func(s Stats) []metricValue { return one(s.Mux.LinkRate) }},
	{"binlog_events_total", "Binlog event packets of a replica's binlog dump: recoded for the WAN (the exit), restored from it (the entry), or passed raw (the exit sent them as they came).", counter, "action",
		func(s Stats) []metricValue {
			return []metricValue{{"recoded", float64(s.Mux.BinlogSent)}, {"restored", float64(s.Mux.BinlogRestored)}, {"passed_raw", float64(s.Mux.BinlogPassed)}}
		}},
	{"input_rejected_total", "Malformed input from the WAN, counted where it was caught, by the check that failed: frame_check (a frame's header, zstd decoding or checksum, or its mux records' layout or protocol), record_tag (a mux link's AES-GCM record) or binlog_event (a binlog record that does not restore). Each ends the WAN connection it came on, a binlog_event only its stream.", counter, "check",
		func(s Stats) []metricValue {
			return []metricValue{{"frame_check", float64(s.Faults.FrameCheckFailures)}, {"record_tag", float64(s.Faults.RecordTagFailures)}, {"binlog_event", float64(s.Faults.BinlogEventErrors)}}
		}},
	{"tls_handshakes_refused_total", "WAN TLS handshakes that failed: the peer's certificate refused here, or ours there.", counter, "",
		func(s Stats) []metricValue { return one(s.TLSRefused) }},
}

// MetricNames are the names of the metrics a tunnel end serves (with TLS), its process's
// CPU time among them.
func MetricNames() []string {
	names := make([]string, 0, len(metrics)+2)
	for _, m := range metrics {
		names = append(names, metricPrefix+m.name)
	}
	return append(names, certExpiryMetric, "process_cpu_seconds_total")
}

const (
	metricPrefix     = "wirelab_tunnel_"
	certExpiryMetric = metricPrefix + "tls_cert_expiry_seconds"
)

// collector reads a tunnel end's counters at each scrape.
type collector struct {
	t      *Tunnel
	descs  []*prometheus.Desc
	expiry *prometheus.Desc
}

func newCollector(t *Tunnel) *collector {
	c := &collector{t: t}
	role := prometheus.Labels{"role": string(t.cfg.Role)}
	for _, m := range metrics {
		var labels []string
		if m.label != "" {
			labels = []string{m.label}
		}
		c.descs = append(c.descs, prometheus.NewDesc(metricPrefix+m.name, m.help, labels, role))
	}
	c.expiry = prometheus.NewDesc(certExpiryMetric,
		"Seconds until the certificate this end's new WAN connections use expires (negative: expired); absent without TLS.", nil, role)
	return c
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
	ch <- c.expiry
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	s := c.t.Stats()
	for i, m := range metrics {
		for _, v := range m.values(s) {
			var labels []string
			if v.label != "" {
				labels = []string{v.label}
			}
			ch <- prometheus.MustNewConstMetric(c.descs[i], m.typ, v.v, labels...)
		}
	}
	if na := c.t.CertNotAfter(); !na.IsZero() {
		ch <- prometheus.MustNewConstMetric(c.expiry, gauge, time.Until(na).Seconds())
	}
}

// MetricsHandler serves the end's metrics and its process's (CPU, memory, descriptors) in
// Prometheus's text format.
func (t *Tunnel) MetricsHandler() http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(newCollector(t), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
}

// MetricsAddr is where the metrics are served; nil without Config.MetricsListen.
func (t *Tunnel) MetricsAddr() net.Addr {
	if t.metrics == nil {
		return nil
	}
	return t.metrics.Addr()
}
