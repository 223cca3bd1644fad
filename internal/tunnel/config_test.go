package tunnel

import (
	"crypto/tls"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		err  bool
	}{
		{"65536", 65536, false}, {"64k", 65536, false}, {"64K", 65536, false}, {"64KiB", 65536, false},
		{"64KB", 65536, false}, {"1MiB", 1 << 20, false}, {"1m", 1 << 20, false}, {"2GiB", 2 << 30, false},
		{" 8 KiB ", 8192, false}, {"0", 0, false}, {"", 0, true}, {"-1", 0, true}, {"1.5MiB", 0, true},
		{"64 apples", 0, true}, {"KiB", 0, true}, {"99999999999999999999", 0, true}, {"9000000000GiB", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseSize(tt.in)
			if (err != nil) != tt.err || got != tt.want {
				t.Fatalf("ParseSize(%q) = %d, %v; want %d, error %v", tt.in, got, err, tt.want, tt.err)
			}
		})
	}
	for _, n := range []int64{1, 1000, 1024, 65536, 3 << 20, 1 << 30} {
		if got, err := ParseSize(FormatSize(n)); err != nil || got != n {
			t.Errorf("ParseSize(FormatSize(%d)) = %d, %v", n, got, err)
		}
	}
}

func TestConfigValidation(t *testing.T) {
	ok := Config{Role: Entry, Listen: "127.0.0.1:0", To: "127.0.0.1:4406"}
	tests := []struct {
		name string
		mod  func(*Config)
		want string // substring of the error; "" means valid
	}{
		{"valid", func(*Config) {}, ""},
		{"bad role", func(c *Config) { c.Role = "middle" }, "want entry or exit"},
		{"listen without port", func(c *Config) { c.Listen = "127.0.0.1" }, "--listen"},
		{"listen bad port", func(c *Config) { c.Listen = "127.0.0.1:http" }, "--listen"},
		{"wildcard ipv4", func(c *Config) { c.Listen = "0.0.0.0:3307" }, "--allow-wildcard"},
		{"wildcard ipv6", func(c *Config) { c.Listen = "[::]:3307" }, "--allow-wildcard"},
		{"wildcard empty host", func(c *Config) { c.Listen = ":3307" }, "--allow-wildcard"},
		{"wildcard allowed", func(c *Config) { c.Listen = "0.0.0.0:0"; c.AllowWildcard = true }, ""},
		{"to without host", func(c *Config) { c.To = ":3306" }, "--to"},
		{"to port 0", func(c *Config) { c.To = "127.0.0.1:0" }, "--to"},
		{"unknown compress", func(c *Config) { c.Compress = "gzip" }, "--compress \"gzip\": want auto, zstd or off"},
		{"level too high", func(c *Config) { c.Level = 23 }, "--level 23: want auto or a zstd level 1..22"},
		{"level negative", func(c *Config) { c.Level = -1 }, "--level"},
		{"unknown mux", func(c *Config) { c.Mux = "maybe" }, "--mux \"maybe\": want on or off"},
		{"window not a power of two", func(c *Config) { c.Window = 3 << 20 }, "--window"},
		{"window too large", func(c *Config) { c.Window = 2 * MaxWindow }, "--window"},
		{"window 16MiB", func(c *Config) { c.Window = 16 << 20 }, ""},
		{"links negative", func(c *Config) { c.Links = -1 }, "--links -1: want 1..64"},
		{"links too many", func(c *Config) { c.Links = MaxLinks + 1 }, "--links 65"},
		{"links without the mux", func(c *Config) { c.Mux = MuxOff; c.Links = 2 }, "only with --mux on"},
		{"links on an exit", func(c *Config) { c.Role = Exit; c.Links = 2 }, "only with --mux on on an entry"},
		{"links 4", func(c *Config) { c.Links = 4 }, ""},
		{"link cpus unknown", func(c *Config) { c.LinkCPUs = "pinned" }, "--link-cpus \"pinned\": want spread or free"},
		{"link cpus without the mux", func(c *Config) { c.Mux = MuxOff; c.LinkCPUs = LinkCPUsFree }, "--link-cpus free: places mux links' relay threads"},
		{"link cpus on an exit", func(c *Config) { c.Role = Exit; c.Mux = MuxOff; c.LinkCPUs = LinkCPUsFree }, ""},
		{"link cpus free", func(c *Config) { c.LinkCPUs = LinkCPUsFree }, ""},
		{"group negative", func(c *Config) { c.GroupMaxSize = -5 }, "--group-max-size"},
		{"group too large", func(c *Config) { c.GroupMaxSize = MaxGroupSize + 1 }, "--group-max-size"},
		{"timeout negative", func(c *Config) { c.GroupTimeout = -1 }, "--group-timeout"},
		{"group wait negative", func(c *Config) { c.GroupWait = GroupWait{D: -time.Millisecond} }, "--group-wait -1ms: want 0"},
		{"group wait too long", func(c *Config) { c.GroupWait = GroupWait{D: MaxGroupWait + 1} }, "--group-wait"},
		{"group wait without the mux", func(c *Config) { c.Mux = MuxOff; c.GroupWait = GroupWait{Auto: true} }, "--group-wait auto: holds a mux link's frames"},
		{"group wait on an exit", func(c *Config) { c.Role = Exit; c.Mux = MuxOff; c.GroupWait = GroupWait{D: time.Second} }, ""},
		{"group wait auto", func(c *Config) { c.GroupWait = GroupWait{Auto: true} }, ""},
		{"binlog unknown", func(c *Config) { c.Binlog = "strip" }, "--binlog \"strip\": want recode or raw"},
		{"binlog raw on an entry", func(c *Config) { c.Binlog = BinlogRaw }, "--binlog raw: the exit recodes"},
		{"binlog raw on an exit", func(c *Config) { c.Role = Exit; c.Binlog = BinlogRaw }, ""},
		{"exit TLS without client auth", func(c *Config) { c.Role = Exit; c.TLS = &tls.Config{} }, "client certificates"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ok
			tt.mod(&c)
			tun, err := New(c)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				tun.ln.Close()
				return
			}
			if err == nil || !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("New: err = %v, want ErrConfig mentioning %q", err, tt.want)
			}
		})
	}
}

func TestConfigDefaults(t *testing.T) {
	c, err := Config{Role: Exit, Listen: "127.0.0.1:0", To: "127.0.0.1:3306"}.normalize()
	if err != nil {
		t.Fatal(err)
	}
	if c.Compress != Auto || c.Level != 0 || c.Mux != DefaultMux || c.Links != DefaultLinks() || c.Window != 0 || c.GroupMaxSize != DefaultGroupMaxSize || c.GroupTimeout != DefaultGroupTimeout || c.Binlog != BinlogRecode || c.LinkCPUs != LinkCPUsSpread {
		t.Fatalf("defaults not applied: %+v", c)
	}
}
