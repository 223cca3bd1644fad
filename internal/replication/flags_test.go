package replication

import (
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/engine"
)

// parse runs the study's flags over args into Options for eng, validated.
func parse(t *testing.T, eng engine.Kind, args ...string) (Options, error) {
	t.Helper()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	o := Options{Engine: eng}
	if err := f.Apply(&o); err != nil {
		return o, err
	}
	return o, o.Validate()
}

func TestFlagsDefaultsAreAValidStudy(t *testing.T) {
	o, err := parse(t, engine.Postgres)
	if err != nil {
		t.Fatal(err)
	}
	if ChannelList(o.Channels) != "native,tunnel" || len(o.RTTs) != 5 || o.RTTs[3] != 250*time.Millisecond ||
		o.Precision != 0.05 || o.Rule != DefaultRule || len(o.Loads) != 4 {
		t.Errorf("defaults for postgres: %+v", o)
	}
	if o, _ := parse(t, engine.MariaDB); ChannelList(o.Channels) != "native,native-compressed,tunnel" {
		t.Errorf("mariadb's default channels %s", ChannelList(o.Channels))
	}
}

func TestFlagsNameTheBadOne(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--loads", "300,x"}, "--loads"},
		{[]string{"--rtts", "0,1h"}, "--rtts"},
		{[]string{"--scenarios", "1,1"}, "appears twice"},
		{[]string{"--precision", "80%"}, "--precision"},
		{[]string{"--channels", "native-compressed"}, "native-compressed"}, // postgres has none
		{[]string{"--scenarios", "3", "--loads", ""}, "--loads is empty"},
		{[]string{"--fault-at", "58s"}, "--fault-at"},
		{[]string{"--rand-type", "zipf"}, "--rand-type"},
	} {
		_, err := parse(t, engine.Postgres, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one naming %q", c.args, err, c.want)
		}
	}
}
