package link

import (
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
	"time"
)

func TestFlagsCondition(t *testing.T) {
	cases := []struct {
		args    []string
		want    Condition
		shaper  Shaper
		errWant string // substring naming the flag; "" = ok
	}{
		{nil, Condition{}, "", ""},
		{[]string{"--rate", "20mbit", "--delay", "5ms", "--jitter", "1ms", "--loss", "0.1%"},
			Condition{RateBps: 20_000_000, Delay: 5 * time.Millisecond, Jitter: time.Millisecond, LossPct: 0.1}, "", ""},
		{[]string{"--rtt", "40ms", "--loss", "0.5", "--shaper", "nfqueue"}, Condition{Delay: 20 * time.Millisecond, LossPct: 0.5}, "nfqueue", ""},
		{[]string{"--rate", "unlimited", "--shaper", "netem", "--delay", "0"}, Condition{}, "netem", ""},
		{[]string{"--delay", "5ms", "--rtt", "10ms"}, Condition{}, "", "--delay and --rtt"},
		{[]string{"--delay", "-5ms"}, Condition{}, "", "--delay"},
		{[]string{"--delay", "5"}, Condition{}, "", "--delay \"5\": want a duration with a unit"},
		{[]string{"--delay", "11s"}, Condition{}, "", "--delay"},
		{[]string{"--rtt", "30s"}, Condition{}, "", "--rtt"},
		{[]string{"--delay", "1ms", "--jitter", "2ms"}, Condition{}, "", "--jitter"},
		{[]string{"--jitter", "1ms"}, Condition{}, "", "--jitter"},
		{[]string{"--loss", "101%"}, Condition{}, "", "--loss"},
		{[]string{"--loss", "-1"}, Condition{}, "", "--loss"},
		{[]string{"--loss", "lots"}, Condition{}, "", "--loss"},
		{[]string{"--rate", "-5mbit"}, Condition{}, "", "--rate"},
		{[]string{"--rate", "20furlongs"}, Condition{}, "", "--rate"},
		{[]string{"--shaper", "tbf"}, Condition{}, "", "--shaper \"tbf\""},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			fs := flag.NewFlagSet("t", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			f := AddFlags(fs)
			if err := fs.Parse(c.args); err != nil {
				t.Fatal(err)
			}
			got, shaper, err := f.Condition()
			if c.errWant != "" {
				if err == nil || !strings.Contains(err.Error(), c.errWant) {
					t.Fatalf("err = %v, want one mentioning %q", err, c.errWant)
				}
				if !errors.Is(err, ErrBadFlag) && !errors.Is(err, ErrBadRate) && !errors.Is(err, ErrBadShaper) {
					t.Errorf("err %v is not a named link error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want || shaper != c.shaper {
				t.Errorf("got %+v %q, want %+v %q", got, shaper, c.want, c.shaper)
			}
		})
	}
}
