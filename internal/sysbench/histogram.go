package sysbench

import (
	"regexp"
	"strings"

	"github.com/wirelab/wirelab/internal/stats"
)

// histogramTitle opens the histogram --histogram=on prints at the end of a run, before
// the final report (sysbench 1.0.20's sysbench.c); a header line and one line per
// non-empty bucket follow:
//
//	Latency histogram (values are in milliseconds)
//	       value  ------------- distribution ------------- count
//	       1.759 |**                                       12
const histogramTitle = "Latency histogram (values are in milliseconds)"

// reBucket is one bucket line: the bucket's value (%12.3f), a bar of up to 40 stars and
// the count.
var reBucket = regexp.MustCompile(`^\s*([0-9.]+) \|\**\s+([0-9]+)$`)

// ParseHistogram reads the latency histogram from sysbench's output; ok is false when
// the output has none (no --histogram, or a run that ended before its report).
func ParseHistogram(out string) (h stats.Histogram, ok bool) {
	_, rest, found := strings.Cut(out, histogramTitle)
	if !found {
		return stats.Histogram{}, false
	}
	var buckets []stats.Bucket
	for _, line := range strings.Split(rest, "\n")[1:] {
		if strings.Contains(line, "distribution") {
			continue
		}
		m := reBucket.FindStringSubmatch(line)
		if m == nil {
			break
		}
		buckets = append(buckets, stats.Bucket{Ms: num(m[1]), Count: integer(m[2])})
	}
	if len(buckets) == 0 {
		return stats.Histogram{}, false
	}
	return stats.NewHistogram(buckets), true
}
