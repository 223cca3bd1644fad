package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/wirelab/wirelab/internal/result"
)

// machineText says whether the run had the machine to itself: on a 2-core box another
// measurement, or a lab up by hand, competes for the same CPUs.
func machineText(m *result.Machine) string {
	var s string
	switch {
	case m.WaitedFor != "":
		s = fmt.Sprintf("waited %s for %s, then held the measurement lock",
			time.Duration(m.WaitedS*float64(time.Second)).Round(time.Second), m.WaitedFor)
	case m.Exclusive && len(m.OtherLabs) == 0:
		return "alone (held the measurement lock)"
	case m.Exclusive:
		s = "held the measurement lock"
	default:
		s = "did not hold the measurement lock"
	}
	if n := len(m.OtherLabs); n > 0 {
		noun := "lab"
		if n > 1 {
			noun = "labs"
		}
		s += fmt.Sprintf("; shared with %s %s, up outside any measurement (their processes may have used the CPUs)",
			noun, strings.Join(m.OtherLabs, ", "))
	}
	return s
}
