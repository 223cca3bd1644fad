package flagx

import (
	"flag"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestGiven(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.String("rate", "unlimited", "")
	fs.String("tunnel-level", "", "")
	fs.String("tunnel-mux", "", "")
	if err := fs.Parse([]string{"--tunnel-mux", "on", "--tunnel-level=3"}); err != nil {
		t.Fatal(err)
	}
	if Given(fs, "rate") || !Given(fs, "tunnel-mux") {
		t.Errorf("Given: rate %v, tunnel-mux %v; want false, true", Given(fs, "rate"), Given(fs, "tunnel-mux"))
	}
	tunnel := func(n string) bool { return len(n) > 7 && n[:7] == "tunnel-" }
	if got := FirstGiven(fs, tunnel); got != "tunnel-level" {
		t.Errorf("FirstGiven = %q, want tunnel-level (name order)", got)
	}
	if got := FirstGiven(fs, func(n string) bool { return n == "rate" }); got != "" {
		t.Errorf("FirstGiven of a default = %q, want none", got)
	}
}

func TestList(t *testing.T) {
	var l List
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.Var(&l, "from", "")
	if err := fs.Parse([]string{"--from", "a, b,", "--from", "c"}); err != nil {
		t.Fatal(err)
	}
	if want := (List{"a", "b", "c"}); !reflect.DeepEqual(l, want) || l.String() != "a,b,c" {
		t.Errorf("List = %q (%s), want %q", l, l.String(), want)
	}
}

func TestDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		6 * time.Hour: "6h", time.Second: "1s", 90 * time.Second: "1m30s", time.Minute: "1m",
		90 * time.Minute: "1h30m", 4*time.Hour + time.Second: "4h0m1s", 1500 * time.Microsecond: "1.5ms", 0: "0s",
	} {
		got := Duration(d)
		if got != want {
			t.Errorf("Duration(%v) = %q, want %q", d, got, want)
		}
		if back, err := time.ParseDuration(got); err != nil || back != d {
			t.Errorf("Duration(%v) = %q reads back as %v, %v", d, got, back, err)
		}
	}
}

func TestParseThreads(t *testing.T) {
	got, err := ParseThreads("1, 8,32")
	if err != nil || !reflect.DeepEqual(got, []int{1, 8, 32}) {
		t.Fatalf("ParseThreads: %v %v", got, err)
	}
	for v, want := range map[string]string{
		"":       "--threads is empty",
		"0":      `--threads "0": "0" is not allowed; want comma-separated whole numbers 1..4096`,
		"4097":   `"4097" is not allowed`,
		"1,x":    `"x" is not allowed`,
		"8,1,8":  "8 appears twice",
		"1,,2":   `"" is not allowed`,
		" 16 ,4": "",
	} {
		_, err := ParseThreads(v)
		if (want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), want) {
			t.Errorf("ParseThreads(%q): %v, want %q", v, err, want)
		}
	}
}

func TestJoinInts(t *testing.T) {
	if got := JoinInts([]int{1, 8, 32}); got != "1,8,32" {
		t.Errorf("JoinInts = %q", got)
	}
	if back, err := ParseThreads(JoinInts([]int{4, 2})); err != nil || !reflect.DeepEqual(back, []int{4, 2}) {
		t.Errorf("ParseThreads(JoinInts) = %v, %v", back, err)
	}
}
