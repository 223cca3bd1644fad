package tunnel

import (
	"flag"
	"io"
	"strings"
	"testing"
	"time"
)

func TestFlagsKnobs(t *testing.T) {
	parseWith := func(wait GroupWait, args ...string) (Knobs, error) {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		f := AddFlags(fs, Zstd, wait)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		return f.Knobs()
	}
	parse := func(args ...string) (Knobs, error) { return parseWith(GroupWait{}, args...) }
	k, err := parse()
	if err != nil {
		t.Fatal(err)
	}
	if want := (Knobs{Compress: Zstd, Mux: DefaultMux, GroupMaxSize: DefaultGroupMaxSize, GroupTimeout: DefaultGroupTimeout, Binlog: BinlogRecode}); k != want {
		t.Errorf("defaults: %+v, want %+v", k, want)
	}
	k, err = parse("--tunnel-compress", "off", "--tunnel-level", "3", "--tunnel-mux", "off", "--tunnel-window", "32MiB",
		"--tunnel-group-max-size", "256k", "--tunnel-group-timeout", "5ms", "--tunnel-binlog", "raw")
	if err != nil {
		t.Fatal(err)
	}
	if want := (Knobs{Compress: Off, Level: 3, Mux: MuxOff, Window: 32 << 20, GroupMaxSize: 256 << 10, GroupTimeout: 5 * time.Millisecond, Binlog: BinlogRaw}); k != want {
		t.Errorf("given: %+v, want %+v", k, want)
	}
	// The command's default wait, and one given.
	if k, err = parseWith(GroupWait{Auto: true}); err != nil || k.GroupWait != (GroupWait{Auto: true}) {
		t.Errorf("default wait auto: %+v, %v", k.GroupWait, err)
	}
	if k, err = parseWith(GroupWait{Auto: true}, "--tunnel-group-wait", "40ms"); err != nil || k.GroupWait != (GroupWait{D: 40 * time.Millisecond}) {
		t.Errorf("--tunnel-group-wait 40ms: %+v, %v", k.GroupWait, err)
	}
	if k, err = parseWith(GroupWait{Auto: true}, "--tunnel-group-wait", "0", "--tunnel-mux", "off"); err != nil || !k.GroupWait.IsZero() {
		t.Errorf("--tunnel-group-wait 0 with the mux off: %+v, %v", k.GroupWait, err)
	}
	for _, c := range []struct {
		args []string
		flag string
	}{
		{[]string{"--tunnel-compress", "lz4"}, "--tunnel-compress"},
		{[]string{"--tunnel-level", "30"}, "--tunnel-level"},
		{[]string{"--tunnel-mux", "maybe"}, "--tunnel-mux"},
		{[]string{"--tunnel-window", "3MiB"}, "--tunnel-window"},
		{[]string{"--tunnel-group-max-size", "lots"}, "--tunnel-group-max-size"},
		{[]string{"--tunnel-links", "-1"}, "--tunnel-links"},
		{[]string{"--tunnel-links", "65"}, "--tunnel-links"},
		{[]string{"--tunnel-links", "2", "--tunnel-mux", "off"}, "--tunnel-links"},
		{[]string{"--tunnel-group-wait", "soon"}, "--tunnel-group-wait"},
		{[]string{"--tunnel-group-wait", "-1ms"}, "--tunnel-group-wait"},
		{[]string{"--tunnel-group-wait", "11s"}, "--tunnel-group-wait"},
		{[]string{"--tunnel-group-wait", "auto", "--tunnel-mux", "off"}, "--tunnel-group-wait"},
		{[]string{"--tunnel-binlog", "strip"}, "--tunnel-binlog"},
		{[]string{"--tunnel-link-cpus", "pinned"}, "--tunnel-link-cpus"},
		{[]string{"--tunnel-link-cpus", "free", "--tunnel-mux", "off"}, "--tunnel-link-cpus"},
	} {
		_, err := parse(c.args...)
		if err == nil || !strings.Contains(err.Error(), c.flag) {
			t.Errorf("%v: %v, want an error naming %s", c.args, err, c.flag)
		}
	}
}

// Config gives --mux and --links to the entry only and --binlog to the exit only; Args then
// leaves the tunnel's defaults to the end it starts.
func TestKnobsConfig(t *testing.T) {
	k := Knobs{Compress: Zstd, Level: 19, Mux: MuxOff, Links: 3, Window: 128 << 20, GroupMaxSize: 256 << 10, GroupTimeout: 5 * time.Millisecond, GroupWait: GroupWait{Auto: true}}
	if got, want := strings.Join(k.Config(Entry).Args(), " "), "--compress zstd --level 19 --mux off --links 3 --window 128MiB --group-max-size 256KiB --group-timeout 5ms --group-wait auto --drain-timeout 0s"; got != want {
		t.Errorf("entry args %q, want %q", got, want)
	}
	if got := strings.Join(k.Config(Exit).Args(), " "); strings.Contains(got, "--mux") || strings.Contains(got, "--links") {
		t.Errorf("exit args %q name --mux or --links", got)
	}
	k.Binlog = BinlogRaw
	if got := strings.Join(k.Config(Exit).Args(), " "); !strings.Contains(got, " --binlog raw") {
		t.Errorf("exit args %q, want --binlog raw", got)
	}
	if got := strings.Join(k.Config(Entry).Args(), " "); strings.Contains(got, "--binlog") {
		t.Errorf("entry args %q name --binlog", got)
	}
	k.LinkCPUs = LinkCPUsFree
	for _, role := range []Role{Entry, Exit} {
		if got := strings.Join(k.Config(role).Args(), " "); !strings.Contains(got, " --link-cpus free ") {
			t.Errorf("%s args %q, want --link-cpus free (both ends place their relay threads)", role, got)
		}
	}
	if got := (Knobs{}).Config(Entry).Args(); strings.Join(got, " ") != "--drain-timeout 0s" {
		t.Errorf("zero knobs give args %q, want only --drain-timeout 0s (Config's zero)", got)
	}
}
