package pgbench

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Progress is one -P line, written to standard error:
//
//	progress: 1.0 s, 50985.6 tps, lat 0.039 ms stddev 0.174, 0 failed
//	progress: 2.0 s, 211.0 tps, lat 0.222 ms stddev 0.125, 0 failed, lag 0.099 ms
//
// The figures are over the last interval; latencies are in milliseconds.
type Progress struct {
	T           float64 // seconds since the run started (end of the interval)
	TPS         float64
	LatAvgMs    float64
	LatStddevMs float64
	Failed      int64   // failed transactions in the interval
	LagMs       float64 // schedule lag under -R; 0 otherwise
}

var reProgress = regexp.MustCompile(`^progress: ([0-9.]+) s, ([0-9.]+) tps, lat ([0-9.]+) ms stddev ([0-9.]+|NaN)` +
	`(?:, ([0-9]+) failed)?(?:, lag ([0-9.]+) ms)?`)

// ParseProgress parses one progress line; it reports false for every other line.
func ParseProgress(line string) (Progress, bool) {
	m := reProgress.FindStringSubmatch(strings.TrimSpace(line))
	if m == nil {
		return Progress{}, false
	}
	p := Progress{T: num(m[1]), TPS: num(m[2]), LatAvgMs: num(m[3]), LatStddevMs: num(m[4]), LagMs: num(m[6])}
	p.Failed, _ = strconv.ParseInt(m[5], 10, 64)
	return p, true
}

// Summary is pgbench's final report on standard output. Latencies are in milliseconds.
type Summary struct {
	ClientVersion   string        // "15.18 (Debian 15.18-0+deb12u1)" from "pgbench (...)"
	TransactionType string        // "<builtin: select only>", "<builtin: TPC-B (sort of)>"
	Scale           int           // scaling factor
	QueryMode       string        // simple, extended, prepared
	Clients         int           // number of clients
	Threads         int           // number of threads
	Duration        time.Duration // -T; 0 for a -t run
	Transactions    int64         // number of transactions actually processed
	Failed          int64         // number of failed transactions
	LatAvgMs        float64       // latency average
	// LatStddevMs is the latency standard deviation; pgbench prints it only with -P,
	// -R or -L (HasStddev says whether it did).
	LatStddevMs   float64
	HasStddev     bool
	LagAvgMs      float64 // rate limit schedule lag under -R
	LagMaxMs      float64
	InitialConnMs float64 // initial connection time: all clients' connects, not in TPS
	TPS           float64 // "without initial connection time"
	// Logged is the latency read from the per-transaction log (Options.LatencyLog); nil
	// without it.
	Logged *Logged
}

// ErrNoSummary means the output has no complete summary (pgbench failed before the run,
// or the run was aborted).
var ErrNoSummary = errors.New("no pgbench summary")

var (
	reVersion = regexp.MustCompile(`^pgbench \((.*)\)$`)
	reCount   = regexp.MustCompile(`^([0-9]+)`)
	reLag     = regexp.MustCompile(`^avg ([0-9.]+) \(max ([0-9.]+)\) ms`)
)

// ParseSummary reads pgbench's standard output by its labels.
func ParseSummary(stdout string) (Summary, error) {
	var s Summary
	var haveTPS, haveLat bool
	for _, line := range strings.Split(stdout, "\n") {
		line = strings.TrimSpace(line)
		if m := reVersion.FindStringSubmatch(line); m != nil {
			s.ClientVersion = m[1]
			continue
		}
		key, val, ok := cut(line)
		if !ok {
			continue
		}
		switch key {
		case "transaction type":
			s.TransactionType = val
		case "scaling factor":
			s.Scale = int(count(val))
		case "query mode":
			s.QueryMode = val
		case "number of clients":
			s.Clients = int(count(val))
		case "number of threads":
			s.Threads = int(count(val))
		case "duration":
			s.Duration = time.Duration(count(val)) * time.Second
		case "number of transactions actually processed":
			s.Transactions = count(val) // "400/400" for -t runs: the part before the slash
		case "number of failed transactions":
			s.Failed = count(val)
		case "latency average":
			s.LatAvgMs, haveLat = ms(val), true
		case "latency stddev":
			s.LatStddevMs, s.HasStddev = ms(val), true
		case "rate limit schedule lag":
			if m := reLag.FindStringSubmatch(val); m != nil {
				s.LagAvgMs, s.LagMaxMs = num(m[1]), num(m[2])
			}
		case "initial connection time":
			s.InitialConnMs = ms(val)
		case "tps":
			s.TPS, haveTPS = num(strings.Fields(val)[0]), true
		}
	}
	if !haveTPS || !haveLat {
		return s, fmt.Errorf("%w: output lacks tps or latency average", ErrNoSummary)
	}
	return s, nil
}

// cut splits "key: value" and "key = value" lines (pgbench uses both).
func cut(line string) (string, string, bool) {
	i := strings.IndexAny(line, ":=")
	if i <= 0 {
		return "", "", false
	}
	return strings.TrimSpace(line[:i]), strings.TrimSpace(line[i+1:]), true
}

func count(s string) int64 {
	n, _ := strconv.ParseInt(reCount.FindString(s), 10, 64)
	return n
}

func ms(s string) float64 { return num(strings.TrimSuffix(s, " ms")) }

func num(s string) float64 {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return 0
	}
	return f
}
