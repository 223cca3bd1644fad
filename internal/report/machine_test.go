package report

import (
	"testing"

	"github.com/wirelab/wirelab/internal/result"
)

func TestMachineText(t *testing.T) {
	for _, c := range []struct {
		m    result.Machine
		want string
	}{
		{result.Machine{Exclusive: true}, "alone (held the measurement lock)"},
		{result.Machine{Exclusive: true, WaitedS: 62.4, WaitedFor: "study bandwidth, lab 4ee4e7, pid 812"},
			"waited 1m2s for study bandwidth, lab 4ee4e7, pid 812, then held the measurement lock"},
		{result.Machine{Exclusive: true, OtherLabs: []string{"3f9a1c"}},
			"held the measurement lock; shared with lab 3f9a1c, up outside any measurement (their processes may have used the CPUs)"},
		{result.Machine{OtherLabs: []string{"a", "b"}},
			"did not hold the measurement lock; shared with labs a, b, up outside any measurement (their processes may have used the CPUs)"},
	} {
		if got := machineText(&c.m); got != c.want {
			t.Errorf("%+v:\n got %s\nwant %s", c.m, got, c.want)
		}
	}
}
