package replication

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/wirelab/wirelab/internal/lab"
)

func TestParseChannels(t *testing.T) {
	got, err := ParseChannels(" tunnel, native ")
	if err != nil || !slices.Equal(got, []Channel{Native, Tunnel}) {
		t.Fatalf("got %v, %v; want native first", got, err)
	}
	for _, bad := range []string{"", ",", "native,native", "native,pigeon"} {
		if _, err := ParseChannels(bad); err == nil || !strings.Contains(err.Error(), "--channels") {
			t.Errorf("ParseChannels(%q) = %v, want an error naming --channels", bad, err)
		}
	}
}

func TestChannelAddr(t *testing.T) {
	tests := []struct {
		ch      Channel
		srcPort int
		host    string
		port    int
		comp    bool
	}{
		{Native, 3306, "198.18.0.2", 3306, false},
		{NativeCompressed, 3306, "198.18.0.2", 3306, true},
		{Tunnel, 3306, "127.0.0.1", lab.TunnelEntryPort, false},
		{Native, 5432, "198.18.0.2", 5432, false},
		{Tunnel, 5432, "127.0.0.1", lab.TunnelEntryPort, false},
	}
	entry := "127.0.0.1:" + strconv.Itoa(lab.TunnelEntryPort)
	for _, tc := range tests {
		h, p, c, err := channelAddr(tc.ch, "198.18.0.2", tc.srcPort, entry)
		if err != nil || h != tc.host || p != tc.port || c != tc.comp {
			t.Errorf("channelAddr(%s, %d) = %s:%d %v", tc.ch, tc.srcPort, h, p, c)
		}
	}
}
