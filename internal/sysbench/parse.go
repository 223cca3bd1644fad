package sysbench

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/wirelab/wirelab/internal/stats"
)

// Interval is one --report-interval line:
//
//	[ 1s ] thds: 8 tps: 1184.93 qps: 18978.86 (r/w/o: 16607.01/0.00/2371.85) lat (ms,95%): 9.39 err/s: 0.00 reconn/s: 0.00
//
// Rates are per second over the interval; LatPct is in milliseconds.
type Interval struct {
	T                  float64 // seconds since the run started (end of the interval)
	Threads            int
	TPS, QPS           float64
	Read, Write, Other float64 // queries per second by kind
	LatPct             float64 // latency percentile, ms
	Percentile         int     // which percentile LatPct is (95 unless --percentile)
	Errors, Reconnects float64 // per second
}

var (
	reIvTime    = regexp.MustCompile(`^\[\s*([0-9.]+)s\s*\]`)
	reIvThreads = regexp.MustCompile(`\bthds:\s*([0-9]+)`)
	reIvTPS     = regexp.MustCompile(`\btps:\s*([0-9.]+)`)
	reIvQPS     = regexp.MustCompile(`\bqps:\s*([0-9.]+)`)
	reIvRWO     = regexp.MustCompile(`\(r/w/o:\s*([0-9.]+)/([0-9.]+)/([0-9.]+)\)`)
	reIvLat     = regexp.MustCompile(`\blat \(ms,([0-9]+)%\):\s*([0-9.]+)`)
	reIvErr     = regexp.MustCompile(`\berr/s:\s*([0-9.]+)`)
	reIvReconn  = regexp.MustCompile(`\breconn/s:\s*([0-9.]+)`)
)

// ParseInterval parses one interval line. It reports false for every other line,
// including the "[ 1s ] queue length: 0, concurrency: 1" lines that --rate adds.
func ParseInterval(line string) (Interval, bool) {
	line = strings.TrimSpace(line)
	m := reIvTime.FindStringSubmatch(line)
	if m == nil {
		return Interval{}, false
	}
	var iv Interval
	iv.T = num(m[1])
	th := reIvThreads.FindStringSubmatch(line)
	tps := reIvTPS.FindStringSubmatch(line)
	if th == nil || tps == nil {
		return Interval{}, false
	}
	iv.Threads, _ = strconv.Atoi(th[1])
	iv.TPS = num(tps[1])
	if m := reIvQPS.FindStringSubmatch(line); m != nil {
		iv.QPS = num(m[1])
	}
	if m := reIvRWO.FindStringSubmatch(line); m != nil {
		iv.Read, iv.Write, iv.Other = num(m[1]), num(m[2]), num(m[3])
	}
	if m := reIvLat.FindStringSubmatch(line); m != nil {
		iv.Percentile, _ = strconv.Atoi(m[1])
		iv.LatPct = num(m[2])
	}
	if m := reIvErr.FindStringSubmatch(line); m != nil {
		iv.Errors = num(m[1])
	}
	if m := reIvReconn.FindStringSubmatch(line); m != nil {
		iv.Reconnects = num(m[1])
	}
	return iv, true
}

// Summary is sysbench's final report. Latencies are in milliseconds. With
// --report-checkpoints sysbench prints a report at each checkpoint and resets its counters
// and its histogram there: the counts below are then the whole run's (the reports added
// up), the rates, latencies and histogram the last report's (after the last checkpoint).
type Summary struct {
	Threads                int // "Number of threads:"
	Read, Write, Other     int64
	Transactions, Queries  int64
	Errors, Reconnects     int64 // "ignored errors:", "reconnects:"
	TPS, QPS               float64
	TotalTimeS             float64
	Events                 int64 // "total number of events:"
	LatMin, LatAvg, LatMax float64
	LatPct, LatSum         float64
	Percentile             int // 95 unless --percentile
	// Histogram is the latency histogram --histogram prints before the final report; nil
	// without it.
	Histogram *stats.Histogram
}

// ErrNoSummary means the output has no final report (sysbench failed or was killed).
var ErrNoSummary = errors.New("no sysbench summary in output")

var rePercentile = regexp.MustCompile(`^([0-9]+)(?:st|nd|rd|th) percentile$`)

// ParseSummary finds the final report by its labels, not by line or column position, so
// extra lines (warnings, --rate's queue lines, FATAL messages) do not disturb it.
func ParseSummary(out string) (Summary, error) {
	var s Summary
	seen := map[string]bool{}
	section := ""
	for _, raw := range strings.Split(out, "\n") {
		line := strings.TrimSpace(raw)
		if strings.HasPrefix(line, "[") || line == "" {
			continue
		}
		label, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		val = strings.TrimSpace(val)
		if val == "" { // a section heading: "SQL statistics:", "Latency (ms):" ...
			section = label
			continue
		}
		first := strings.Fields(val)[0]
		seen[label] = true
		switch label {
		case "Number of threads":
			s.Threads = int(integer(first))
		case "read":
			s.Read += integer(first)
		case "write":
			s.Write += integer(first)
		case "other":
			s.Other += integer(first)
		case "transactions":
			s.Transactions += integer(first)
			s.TPS = perSec(val)
		case "queries":
			s.Queries += integer(first)
			s.QPS = perSec(val)
		case "ignored errors":
			s.Errors += integer(first)
		case "reconnects":
			s.Reconnects += integer(first)
		case "total time":
			s.TotalTimeS = num(strings.TrimSuffix(first, "s"))
		case "total number of events":
			s.Events += integer(first)
		}
		if section != "Latency (ms)" {
			continue
		}
		switch label {
		case "min":
			s.LatMin = num(first)
		case "avg":
			s.LatAvg = num(first)
		case "max":
			s.LatMax = num(first)
		case "sum":
			s.LatSum = num(first)
		default:
			if m := rePercentile.FindStringSubmatch(label); m != nil {
				s.Percentile, _ = strconv.Atoi(m[1])
				s.LatPct = num(first)
			}
		}
	}
	if h, ok := ParseHistogram(out); ok {
		s.Histogram = &h
	}
	if !seen["transactions"] || !seen["total time"] {
		if f := FatalLines(out); len(f) > 0 {
			return s, fmt.Errorf("%w: %s", ErrNoSummary, f[0])
		}
		return s, ErrNoSummary
	}
	return s, nil
}

// FatalLines returns sysbench's "FATAL: ..." lines (it prints them on stdout), without
// the prefix and without repeats, in order.
func FatalLines(out string) []string {
	var lines []string
	seen := map[string]bool{}
	for _, l := range strings.Split(out, "\n") {
		msg, ok := strings.CutPrefix(strings.TrimSpace(l), "FATAL: ")
		if ok && !seen[msg] {
			seen[msg] = true
			lines = append(lines, msg)
		}
	}
	return lines
}

// perSec reads "1234  (1086.09 per sec.)".
func perSec(val string) float64 {
	_, rest, ok := strings.Cut(val, "(")
	if !ok {
		return 0
	}
	f := strings.Fields(rest)
	if len(f) == 0 {
		return 0
	}
	return num(f[0])
}

func num(s string) float64 {
	f, _ := strconv.ParseFloat(s, 64)
	return f
}

func integer(s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return int64(num(s))
	}
	return n
}
