package compare

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseMargin reads --margin, a percentage from 0% to 99% with its sign ("5%"), as the
// fraction Compare takes (0.05).
func ParseMargin(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "%"), 64)
	if err != nil || !strings.HasSuffix(s, "%") || v < 0 || v >= 100 {
		return 0, fmt.Errorf("--margin %q: want a percentage from 0%% to 99%%, e.g. 5%%", s)
	}
	return v / 100, nil
}
