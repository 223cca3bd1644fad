package study

import "testing"

func TestParseChannel(t *testing.T) {
	for s, want := range map[string]Channel{"direct": ChannelDirect, "tunnel": ChannelTunnel} {
		if c, err := ParseChannel(s); c != want || err != nil {
			t.Errorf("ParseChannel(%q) = %q, %v", s, c, err)
		}
	}
	if _, err := ParseChannel("Tunnel"); err == nil || err.Error() != `--channel "Tunnel": want direct or tunnel` {
		t.Errorf("ParseChannel(Tunnel): %v", err)
	}
}
