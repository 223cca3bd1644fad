package tunnel

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// parseEnd parses args (and a --config file among them) as `wirelab tunnel <role>` does.
func parseEnd(t testing.TB, role Role, args ...string) (Config, error) {
	t.Helper()
	fs := flag.NewFlagSet("tunnel "+string(role), flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cmd := AddEndFlags(fs, role)
	if err := fs.Parse(args); err != nil {
		return Config{}, err
	}
	return cmd.Config()
}

// Args → parse gives the Config back, for every flag away from its default.
func TestEndFlagsRoundTrip(t *testing.T) {
	for _, c := range []struct {
		role Role
		args []string
	}{
		{Entry, []string{"--listen", "127.0.0.1:3307", "--to", "198.18.0.2:4406"}},
		{Entry, []string{"--listen", "127.0.0.1:3307", "--to", "198.18.0.2:4406", "--tls-cert", "e.pem", "--tls-key", "k.pem", "--tls-ca", "ca.pem",
			"--stats", "--stats-every", "10s", "--compress", "zstd", "--level", "19", "--mux", "on", "--links", "3", "--link-cpus", "free",
			"--window", "128MiB", "--group-max-size", "256k", "--group-timeout", "5ms", "--group-wait", "auto", "--allow-wildcard",
			"--metrics-listen", "0.0.0.0:9464", "--drain-timeout", "0"}},
		{Exit, []string{"--listen", "198.18.0.2:4406", "--to", "127.0.0.1:3306", "--mux", "off", "--binlog", "raw", "--group-wait", "40ms",
			"--compress", "off", "--level", "auto", "--drain-timeout", "1m30s"}},
	} {
		want, err := parseEnd(t, c.role, c.args...)
		if err != nil {
			t.Fatalf("%s %v: %v", c.role, c.args, err)
		}
		got, err := parseEnd(t, c.role, want.Args()...)
		if err != nil {
			t.Fatalf("%s: parse of Args %v: %v", c.role, want.Args(), err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: round trip of %v\n got %+v\nwant %+v", c.role, want.Args(), got, want)
		}
	}
	cfg, _ := parseEnd(t, Entry, "--listen", "127.0.0.1:1", "--to", "127.0.0.1:2", "--group-max-size", "256k", "--stats")
	if got, want := strings.Join(cfg.Args(), " "), "--listen 127.0.0.1:1 --to 127.0.0.1:2 --stats --group-max-size 256KiB"; got != want {
		t.Errorf("args %q, want %q (defaults left out)", got, want)
	}
}

// Every field a flag sets changes Args: no flag is parsed and then dropped on the way to a
// child's command line.
func TestEndFlagsEachRendered(t *testing.T) {
	base, err := parseEnd(t, Entry, "--listen", "127.0.0.1:1", "--to", "127.0.0.1:2")
	if err != nil {
		t.Fatal(err)
	}
	values := map[string]string{"listen": "127.0.0.1:5", "to": "127.0.0.1:6", "tls-cert": "c", "tls-key": "k", "tls-ca": "a",
		"stats": "true", "stats-every": "1s", "compress": "off", "level": "7", "mux": "off", "links": "2", "link-cpus": "free",
		"window": "2MiB", "group-max-size": "1KiB", "group-timeout": "9ms", "group-wait": "auto", "binlog": "raw",
		"allow-wildcard": "true", "metrics-listen": "127.0.0.1:9", "drain-timeout": "1s"}
	for _, f := range endFlags {
		v, ok := values[f.name]
		if !ok {
			t.Errorf("--%s: no test value", f.name)
			continue
		}
		c := base
		if err := f.set(&c, v); err != nil {
			t.Fatalf("--%s %s: %v", f.name, v, err)
		}
		if reflect.DeepEqual(c.Args(), base.Args()) {
			t.Errorf("--%s %s does not change Args %v", f.name, v, base.Args())
		}
	}
}

func TestEndFlagsRefused(t *testing.T) {
	base := []string{"--listen", "127.0.0.1:1", "--to", "127.0.0.1:2"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "--listen and --to are required"},
		{[]string{"--stats-every", "0s"}, "--stats-every"},
		{[]string{"--drain-timeout", "-1s"}, "--drain-timeout"},
		{[]string{"--metrics-listen", ":9464"}, "--metrics-listen"},
		{[]string{"--metrics-listen", "localhost"}, "--metrics-listen"},
		{[]string{"--tls-cert", "c.pem"}, "--tls-cert, --tls-key and --tls-ca go together"},
		{[]string{"--links", "two"}, "--links"},
		{[]string{"--window", "lots"}, "--window"},
	} {
		args := c.args
		if c.want != "--listen and --to are required" {
			args = append(append([]string{}, base...), c.args...)
		}
		_, err := parseEnd(t, Entry, args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error naming %s", c.args, err, c.want)
		}
	}
	if _, err := parseEnd(t, Entry, append(base, "--metrics-listen", "0.0.0.0:9464", "--allow-wildcard")...); err != nil {
		t.Errorf("a wildcard metrics address with --allow-wildcard: %v", err)
	}
}

// The config file sets what the command line does not; the command line wins.
func TestConfigFilePrecedence(t *testing.T) {
	file := filepath.Join("testdata", "exit.yaml")
	cfg, err := parseEnd(t, Exit, "--config", file, "--level", "7", "--listen", "127.0.0.1:5406")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Level != 7 || cfg.Listen != "127.0.0.1:5406" {
		t.Errorf("the command line lost: level %d, listen %s", cfg.Level, cfg.Listen)
	}
	if cfg.To != "127.0.0.1:3306" || cfg.Compress != Zstd || !cfg.GroupWait.Auto || !cfg.PrintStats || cfg.StatsEvery != time.Minute ||
		cfg.MetricsListen != "127.0.0.1:9464" || cfg.DrainTimeout != 45*time.Second || cfg.TLSCA != "/etc/wirelab/certs/ca.pem" {
		t.Errorf("file keys not applied: %+v", cfg)
	}
	if cfg.GroupMaxSize != DefaultGroupMaxSize || cfg.Mux != DefaultMux {
		t.Errorf("keys the file leaves out are not at their defaults: %+v", cfg)
	}
	// A flag given at its default still wins over the file.
	if cfg, err = parseEnd(t, Exit, "--config", file, "--compress", "auto"); err != nil || cfg.Compress != Auto {
		t.Errorf("--compress auto over the file's zstd: %s, %v", cfg.Compress, err)
	}
}

func TestConfigFileRefused(t *testing.T) {
	for _, c := range []struct {
		name, yaml string
		want       []string
	}{
		{"unknown key", "listen: 127.0.0.1:1\ncompression: zstd\n", []string{`unknown key "compression"`, "line 2", "compress,"}},
		{"bad value", "level: max\n", []string{`key "level"`, "want auto or a zstd level 1..22"}},
		{"bad duration", "drain-timeout: soon\n", []string{`key "drain-timeout"`, "like 30s"}},
		{"bad bool", "stats: maybe\n", []string{`key "stats"`, "want true or false"}},
		{"list value", "to: [a, b]\n", []string{`key "to"`, "want one value"}},
		{"twice", "level: 3\nlevel: 4\n", []string{`key "level" given twice`}},
		{"not a mapping", "- listen\n", []string{"want a mapping"}},
		{"not yaml", "listen: [\n", []string{"bad --config file"}},
		{"the config key", "config: other.yaml\n", []string{`unknown key "config"`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "c.yaml")
			if err := os.WriteFile(file, []byte(c.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := parseEnd(t, Exit, "--listen", "127.0.0.1:1", "--to", "127.0.0.1:2", "--config", file)
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range append(c.want, file) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
	if _, err := parseEnd(t, Exit, "--config", filepath.Join(t.TempDir(), "missing.yaml")); err == nil || !strings.Contains(err.Error(), "--config") {
		t.Errorf("missing file: %v", err)
	}
}

// FuzzConfig: no config file makes the parser panic, and one it accepts sets a Config whose
// Args parse back to the same Config.
func FuzzConfig(f *testing.F) {
	seed, err := os.ReadFile(filepath.Join("testdata", "exit.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{string(seed), "", "listen: 127.0.0.1:3307\nto: 127.0.0.1:4406\nmux: off\n",
		"level: 3\nlevel: 4\n", "stats: yes\n", "group-wait: auto\nwindow: 64MiB\nlinks: 4\n", "{listen: a, to: [b]}", "- x\n", "&a x: *a\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		newCmd := func() (*flag.FlagSet, *EndCommand) {
			fs := flag.NewFlagSet("tunnel exit", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			return fs, AddEndFlags(fs, Exit)
		}
		_, file := newCmd()
		c := file.cfg // the defaults, under the file's keys
		if err := applyConfigFile(&c, data, nil); err != nil {
			return
		}
		fs, back := newCmd()
		if err := fs.Parse(c.Args()); err != nil {
			t.Fatalf("Args %q of an accepted file do not parse: %v", c.Args(), err)
		}
		if !reflect.DeepEqual(back.cfg, c) {
			t.Fatalf("file %q: Args %q parse to\n%+v, want\n%+v", data, c.Args(), back.cfg, c)
		}
	})
}
