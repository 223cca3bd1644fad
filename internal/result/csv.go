package result

import (
	"encoding/csv"
	"fmt"
	"os"
	"strconv"
)

var csvHeader = []string{"study", "series", "link_rate_bps", "link_delay_ms", "compression", "tls",
	"transport", "channel", "workload", "threads", "repeat", "tps", "qps", "lat_avg_ms", "lat_p95_ms",
	"errors", "reconnects", "tps_cv", "wire_bytes_per_s_up", "wire_bytes_per_s_down",
	"link_utilization", "cpu_server", "cpu_client", "bottleneck", "failed", "driver", "lat_stddev_ms",
	"lat_p50_ms", "lat_p99_ms", "lat_max_ms"}

// WriteCSV writes one row per point (no per-second series) with a header.
func WriteCSV(path string, points []Point) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	w := csv.NewWriter(f)
	_ = w.Write(csvHeader)
	ff := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	for _, p := range points {
		_ = w.Write([]string{p.Study, p.Series, strconv.FormatInt(p.LinkRateBps, 10), ff(p.LinkDelayMs),
			strconv.FormatBool(p.Compression), strconv.FormatBool(p.TLS), p.Transport, p.Channel,
			p.Workload, strconv.Itoa(p.Threads), strconv.Itoa(p.Repeat), ff(p.TPS), ff(p.QPS),
			ff(p.LatAvgMs), ff(p.LatP95Ms), strconv.FormatInt(p.Errors, 10),
			strconv.FormatInt(p.Reconnects, 10), ff(p.TPSCV), ff(p.WireBytesPerSUp),
			ff(p.WireBytesPerSDown), ff(p.LinkUtilization), ff(p.CPUServer), ff(p.CPUClient),
			p.Bottleneck, strconv.FormatBool(p.Failed), p.Driver, ff(p.LatStddevMs),
			ff(p.LatP50Ms), ff(p.LatP99Ms), ff(p.LatMaxMs)})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return fmt.Errorf("write csv: %w", err)
	}
	return f.Close()
}
