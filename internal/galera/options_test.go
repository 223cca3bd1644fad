package galera

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestValidate(t *testing.T) {
	good := []Options{{}, Default(100 * time.Millisecond), Tuned(MaxRTTLimit),
		{SendWindow: 8, UserSendWindow: 8, FCLimit: 64, Appliers: 4}, {UserSendWindow: 4}}
	for _, o := range good {
		if err := o.Validate(); err != nil {
			t.Errorf("%+v refused: %v", o, err)
		}
	}
	bad := []struct {
		o    Options
		want string // the setting the message must name
	}{
		{Options{MaxRTT: -time.Millisecond}, "max RTT"},
		{Options{MaxRTT: MaxRTTLimit + time.Millisecond}, "max RTT"},
		{Options{SendWindow: -1}, "evs.send_window"},
		{Options{FCLimit: -5}, "gcs.fc_limit"},
		{Options{SendWindow: 4, UserSendWindow: 8}, "evs.user_send_window 8 is above evs.send_window 4"},
		{Options{UserSendWindow: 5}, "above evs.send_window 4"}, // galera's default send window
		{Options{Appliers: 1000}, "wsrep_slave_threads"},
		{Options{Provider: `/x";y`}, "provider"},
	}
	for _, b := range bad {
		err := b.o.Validate()
		if !errors.Is(err, ErrBadOptions) || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%+v: err = %v, want ErrBadOptions naming %q", b.o, err, b.want)
		}
	}
}

func TestSeries(t *testing.T) {
	if s := Default(time.Second).Series(); s != "galera" {
		t.Errorf("default series %q", s)
	}
	if s := Tuned(time.Second).Series(); s != "galera-tuned" {
		t.Errorf("tuned series %q", s)
	}
}

func TestTimeoutsGrowWithRTT(t *testing.T) {
	def := Default(0).Timeouts()
	want := Timeouts{KeepalivePeriod: time.Second, SuspectTimeout: 5 * time.Second, InactiveTimeout: 15 * time.Second,
		InstallTimeout: 7500 * time.Millisecond, PeerTimeout: 3 * time.Second}
	if def != want {
		t.Errorf("at RTT 0: %+v, want galera's defaults %+v", def, want)
	}
	if got := Default(100 * time.Millisecond).Timeouts(); got != want {
		t.Errorf("at 100 ms the defaults span %d RTTs already: %+v", rttMargin, got)
	}
	for _, rtt := range []time.Duration{600 * time.Millisecond, time.Second, MaxRTTLimit} {
		got := Default(rtt).Timeouts()
		if got.SuspectTimeout < rttMargin*rtt || got.PeerTimeout < rttMargin*rtt ||
			got.InactiveTimeout < 3*got.SuspectTimeout || got.InstallTimeout*2 != got.InactiveTimeout ||
			got.KeepalivePeriod*3 > got.SuspectTimeout {
			t.Errorf("at RTT %s: %+v", rtt, got)
		}
	}
}

func TestCheckRTT(t *testing.T) {
	o := Default(20 * time.Millisecond)
	if err := o.CheckRTT(20 * time.Millisecond); err != nil {
		t.Errorf("the RTT asked for: %v", err)
	}
	err := o.CheckRTT(21 * time.Millisecond)
	if !errors.Is(err, ErrRTTAboveTimeouts) || !strings.Contains(err.Error(), "21ms") {
		t.Errorf("21 ms on a cluster for 20 ms: %v", err)
	}
}

func TestIsoDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{time.Second: "PT1S", 7500 * time.Millisecond: "PT7.5S",
		150 * time.Second: "PT150S", 250 * time.Millisecond: "PT0.25S"} {
		if got := isoDuration(d); got != want {
			t.Errorf("isoDuration(%s) = %s, want %s", d, got, want)
		}
	}
}
