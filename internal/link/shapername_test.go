package link

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/result"
)

func TestParseShaper(t *testing.T) {
	for in, want := range map[string]Shaper{"": ShaperAuto, "auto": ShaperAuto, " AUTO ": ShaperAuto,
		"netem": ShaperNetem, "NFQueue": ShaperNfqueue} {
		if got, err := ParseShaper(in); err != nil || got != want {
			t.Errorf("ParseShaper(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"tbf", "htb", "htb+netem", "none"} {
		if _, err := ParseShaper(bad); !errors.Is(err, ErrBadShaper) || !strings.Contains(err.Error(), "--shaper") {
			t.Errorf("ParseShaper(%q) = %v; want ErrBadShaper naming --shaper", bad, err)
		}
	}
}

func TestMadeNamesWhatResultsRecord(t *testing.T) {
	cases := []struct {
		rate bool
		line Shaper
		want Shaper
	}{
		{false, "", "none"}, {true, "", "htb"},
		{false, ShaperNetem, "netem"}, {true, ShaperNetem, "htb+netem"},
		{false, ShaperNfqueue, "nfqueue"}, {true, ShaperNfqueue, "htb+nfqueue"},
	}
	for _, c := range cases {
		got := Made(c.rate, c.line)
		if got != c.want {
			t.Errorf("Made(%v, %q) = %q, want %q", c.rate, c.line, got, c.want)
		}
		// results.json keeps its strings: the type marshals to the same text.
		b, err := json.Marshal(result.LinkDirection{Shaper: string(got)})
		if err != nil {
			t.Fatal(err)
		}
		m, err := json.Marshal(struct {
			Shaper Shaper `json:"shaper"`
		}{got})
		if err != nil {
			t.Fatal(err)
		}
		if want := `{"shaper":"` + string(c.want) + `"}`; string(m) != want || !strings.Contains(string(b), `"shaper":"`+string(c.want)+`"`) {
			t.Errorf("marshalled %s and %s, want %s", m, b, want)
		}
	}
}

func TestShaperUsesAndDelayLine(t *testing.T) {
	cases := []struct {
		s           Shaper
		nfq, netem  bool
		line        Shaper
		description string
	}{
		{"htb+nfqueue", true, false, ShaperNfqueue, "lab, rate and delay"},
		{"nfqueue", true, false, ShaperNfqueue, "lab, delay alone"},
		{"htb+netem", false, true, ShaperNetem, "real host with netem"},
		{"htb", false, false, "", "rate alone"},
		{"none", false, false, "", "nothing shaped"},
		{"", false, false, "", "a file without a shaper"},
		{"c1: htb+netem, c2: htb+nfqueue", true, true, ShaperNetem, "two clients that differ"},
		{"nfqueue-like", false, false, "", "a part, not a substring"},
	}
	for _, c := range cases {
		if c.s.Uses(ShaperNfqueue) != c.nfq || c.s.Uses(ShaperNetem) != c.netem || c.s.DelayLine() != c.line {
			t.Errorf("%s: %q uses nfqueue %v netem %v, delay line %q; want %v %v %q", c.description, c.s,
				c.s.Uses(ShaperNfqueue), c.s.Uses(ShaperNetem), c.s.DelayLine(), c.nfq, c.netem, c.line)
		}
	}
}

// TestSupports is the one rule doctor, the lab and real hosts follow.
func TestSupports(t *testing.T) {
	all := Capabilities{HTB: true, Netem: true, NFQueue: true}
	noNetem := Capabilities{HTB: true, NFQueue: true}
	bare := Capabilities{HTB: true}
	delay := Condition{RateBps: 20_000_000, Delay: 5 * time.Millisecond}
	rate := Condition{RateBps: 20_000_000}
	cases := []struct {
		name    string
		caps    Capabilities
		shaper  Shaper
		c       Condition
		want    Shaper
		wantErr string // substring of the error; "" = none
		is      error
	}{
		{"auto takes netem", all, ShaperAuto, delay, ShaperNetem, "", nil},
		{"auto without netem takes the delay line", noNetem, ShaperAuto, delay, ShaperNfqueue, "", nil},
		{"auto spelled out", noNetem, "auto", delay, ShaperNfqueue, "", nil},
		{"rate needs no delay line", bare, ShaperAuto, rate, "", "", nil},
		{"nfqueue asked with netem there", all, ShaperNfqueue, delay, ShaperNfqueue, "", nil},
		{"netem asked", all, ShaperNetem, delay, ShaperNetem, "", nil},
		{"netem asked, rate only", all, ShaperNetem, rate, "", "", nil},
		{"netem asked, none there", noNetem, ShaperNetem, rate, "", "--shaper netem", ErrNoNetem},
		{"nfqueue asked, none there", Capabilities{HTB: true, Netem: true}, ShaperNfqueue, delay, "", "--shaper nfqueue", nil},
		{"neither delay line", bare, ShaperAuto, delay, "", "--delay/--jitter/--loss", ErrNoDelayLine},
		{"loss alone needs a delay line", bare, ShaperAuto, Condition{LossPct: 1}, "", "--delay/--jitter/--loss", ErrNoDelayLine},
		{"no htb", Capabilities{Netem: true, NFQueue: true}, ShaperAuto, rate, "", "--rate", nil},
		{"no htb, unlimited", Capabilities{Netem: true}, ShaperAuto, Condition{Delay: time.Millisecond}, ShaperNetem, "", nil},
		{"bad shaper", all, "tbf", delay, "", "--shaper \"tbf\"", ErrBadShaper},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Supports(c.caps, c.shaper, c.c)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) || c.is != nil && !errors.Is(err, c.is) {
					t.Fatalf("Supports = %q, %v; want an error with %q (%v)", got, err, c.wantErr, c.is)
				}
				return
			}
			if err != nil || got != c.want {
				t.Errorf("Supports = %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

func TestAtRTTAndOneWay(t *testing.T) {
	c := Condition{RateBps: 1_000_000, Jitter: 3 * time.Millisecond, LossPct: 0.5}
	got := c.AtRTT(40 * time.Millisecond)
	want := Condition{RateBps: 1_000_000, Delay: 20 * time.Millisecond, Jitter: 3 * time.Millisecond, LossPct: 0.5}
	if got != want || got.RTT() != 40*time.Millisecond {
		t.Errorf("AtRTT(40ms) = %+v (RTT %s), want %+v", got, got.RTT(), want)
	}
	if got := c.AtRTT(4 * time.Millisecond); got.Delay != 2*time.Millisecond || got.Jitter != 2*time.Millisecond {
		t.Errorf("AtRTT(4ms) = %+v: want the jitter held to the 2ms delay", got)
	}
	if got := c.AtRTT(0); got.Delay != 0 || got.Jitter != 0 || got.Validate() != nil {
		t.Errorf("AtRTT(0) = %+v: want no delay and no jitter", got)
	}
	if OneWay(RTT(7*time.Millisecond)) != 7*time.Millisecond || RTTMs(2.5) != 5 {
		t.Error("RTT and OneWay (or RTTMs) are not each other's inverse")
	}
}

func TestDirectionConditionReadsBackDirections(t *testing.T) {
	c := Condition{RateBps: 20_000_000, Delay: 1500 * time.Microsecond, Jitter: 100 * time.Microsecond, LossPct: 0.1}
	for _, d := range Directions(c, "htb+nfqueue", map[string]string{"server": "to-server"}) {
		if got := DirectionCondition(d); got != c {
			t.Errorf("DirectionCondition(%+v) = %+v, want %+v", d, got, c)
		}
	}
	if DirectionCondition(result.LinkDirection{RateBps: 1_000_000}).NeedsDelayLine() {
		t.Error("a direction with a rate alone needs no delay line")
	}
}
