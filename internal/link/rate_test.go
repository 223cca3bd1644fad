package link

import (
	"errors"
	"testing"
)

func TestParseRate(t *testing.T) {
	cases := []struct {
		in   string
		want int64
		bad  bool
	}{
		{"20mbit", 20_000_000, false},
		{"1gbit", 1_000_000_000, false},
		{"500kbit", 500_000, false},
		{"2Mbit", 2_000_000, false},
		{"1.5mbit", 1_500_000, false},
		{"2.5mbit", 2_500_000, false},
		{"100bps", 800, false},
		{"1mbps", 8_000_000, false},
		{"1mibit", 1 << 20, false},
		{"unlimited", 0, false},
		{"0mbit", 0, true},
		{"-1mbit", 0, true},
		{"20", 0, true}, // tc would read bytes/s; we want the unit said
		{"20 furlongs", 0, true},
		{"mbit", 0, true},
		{"", 0, true},
	}
	for _, c := range cases {
		got, err := ParseRate(c.in)
		if c.bad {
			if !errors.Is(err, ErrBadRate) {
				t.Errorf("ParseRate(%q) = %d, %v; want ErrBadRate", c.in, got, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("ParseRate(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
}

func TestFormatRateRoundTrips(t *testing.T) {
	for _, bps := range []int64{0, 2_000_000, 20_000_000, 1_000_000_000, 64_000, 1234, 1_500_000, 2_500_000_000} {
		s := FormatRate(bps)
		back, err := ParseRate(s)
		if err != nil || back != bps {
			t.Errorf("%d -> %q -> %d, %v", bps, s, back, err)
		}
	}
}
