package procfs

import (
	"fmt"
	"strconv"
	"strings"
)

// LoadAvg is /proc/loadavg's load averages: runnable and uninterruptible tasks, averaged
// over 1, 5 and 15 minutes.
type LoadAvg struct {
	One, Five, Fifteen float64
}

// ParseLoadAvg parses /proc/loadavg ("0.42 0.31 0.25 1/231 4242").
func ParseLoadAvg(b []byte) (LoadAvg, error) {
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return LoadAvg{}, fmt.Errorf("parse /proc/loadavg %q: want 3 averages", strings.TrimSpace(string(b)))
	}
	var l LoadAvg
	for i, to := range []*float64{&l.One, &l.Five, &l.Fifteen} {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return LoadAvg{}, fmt.Errorf("parse /proc/loadavg: %w", err)
		}
		*to = v
	}
	return l, nil
}

// LoadAvg reads and parses /proc/loadavg.
func (f FS) LoadAvg() (LoadAvg, error) {
	b, err := f.ReadFile("loadavg")
	if err != nil {
		return LoadAvg{}, err
	}
	return ParseLoadAvg(b)
}
