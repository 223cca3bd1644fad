package link

import (
	"errors"
	"flag"
	"strings"
	"testing"
	"time"
)

func sweep(t *testing.T, args ...string) ([]Condition, Shaper, error) {
	t.Helper()
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	s := AddSweepFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return s.Conditions()
}

// TestSweepConditions: every rate × round trip, rates outermost, each wire as
// Flags.Condition reads it; one unlimited undelayed wire by default.
func TestSweepConditions(t *testing.T) {
	cs, sh, err := sweep(t, "--rate", "20mbit,unlimited", "--rtt", "0, 2ms,20ms", "--loss", "0.1%", "--shaper", "netem")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cs {
		got = append(got, c.String())
	}
	want := []string{"rate 20mbit, loss 0.1%", "rate 20mbit, delay 1ms, loss 0.1%", "rate 20mbit, delay 10ms, loss 0.1%",
		"rate unlimited, loss 0.1%", "rate unlimited, delay 1ms, loss 0.1%", "rate unlimited, delay 10ms, loss 0.1%"}
	if strings.Join(got, " | ") != strings.Join(want, " | ") || sh != ShaperNetem {
		t.Errorf("got %q with %q, want %q with netem", got, sh, want)
	}
	cs, _, err = sweep(t, "--delay", "5ms,1ms")
	if err != nil || len(cs) != 2 || cs[0].Delay != 5*time.Millisecond || cs[1].Delay != time.Millisecond {
		t.Errorf("--delay list: %v %v", cs, err)
	}
	cs, sh, err = sweep(t)
	if err != nil || len(cs) != 1 || cs[0] != (Condition{}) || sh != "" {
		t.Errorf("default: %v %q %v", cs, sh, err)
	}
}

// TestSweepRefuses: a bad value names its flag; a wire twice, --delay with --rtt, and a
// jitter larger than one of the delays swept are refused.
func TestSweepRefuses(t *testing.T) {
	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"--rate", "20mbit,fast"}, `"fast"`},
		{[]string{"--rtt", "0,20"}, "--rtt"},
		{[]string{"--rtt", "0,0ms"}, "the same wire twice"},
		{[]string{"--rtt", "20ms", "--delay", "10ms"}, "both given"},
		{[]string{"--rtt", "0,20ms", "--jitter", "1ms"}, "--jitter 1ms is larger than the one-way delay 0s"},
		{[]string{"--rtt", ","}, "comma-separated list"},
		{[]string{"--shaper", "tc"}, "--shaper"},
	} {
		_, _, err := sweep(t, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%v: %v, want it to say %q", c.args, err, c.says)
		}
		if err != nil && !errors.Is(err, ErrBadFlag) && !errors.Is(err, ErrBadRate) && !errors.Is(err, ErrBadShaper) {
			t.Errorf("%v: %v is not a link flag error", c.args, err)
		}
	}
}
