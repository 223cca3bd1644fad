package metrics

import "golang.org/x/sys/unix"

// defaultClkTck is USER_HZ on every Linux architecture Go supports; it is used when the
// auxiliary vector is unavailable.
const defaultClkTck = 100

// atClkTck is AT_CLKTCK, the auxiliary-vector entry that sysconf(_SC_CLK_TCK) returns.
const atClkTck = 17

// clkTck returns the unit of the tick counters in /proc/<pid>/stat and /proc/stat. It is
// what sysconf(_SC_CLK_TCK) reads, taken from the ELF auxiliary vector so no cgo is needed.
func clkTck() float64 {
	aux, err := unix.Auxv()
	if err != nil {
		return defaultClkTck
	}
	for _, kv := range aux {
		if kv[0] == atClkTck && kv[1] > 0 {
			return float64(kv[1])
		}
	}
	return defaultClkTck
}
