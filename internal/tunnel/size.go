package tunnel

import (
	"fmt"
	"strconv"
	"strings"
)

// sizeUnits are binary multiples; "64k", "64K", "64KB" and "64KiB" all mean 65536, as in
// MySQL option files, so nobody has to remember which spelling is decimal.
var sizeUnits = []struct {
	suffix string
	mult   int64
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30},
	{"kb", 1 << 10}, {"mb", 1 << 20}, {"gb", 1 << 30},
	{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30},
	{"b", 1},
}

// ParseSize parses a byte count: a non-negative integer with an optional binary unit
// (k, KB, KiB, m, MB, MiB, g, GB, GiB; case-insensitive). "64KiB", "64k" and "65536" are equal.
func ParseSize(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range sizeUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("parse size %q: want a non-negative integer with an optional unit like 65536, 64k, 64KiB or 1MiB", s)
	}
	if n > (1<<62)/mult {
		return 0, fmt.Errorf("parse size %q: too large", s)
	}
	return n * mult, nil
}

// FormatSize prints n with the largest binary unit that divides it, so defaults read well.
func FormatSize(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%dGiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return strconv.FormatInt(n, 10)
}
