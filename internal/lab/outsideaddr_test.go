package lab

import (
	"strings"
	"testing"
)

func TestOutsideAddr(t *testing.T) {
	if got, err := OutsideAddr("198.51.100.7"); got != "198.51.100.7" || err != nil {
		t.Errorf("a documentation address: %q, %v", got, err)
	}
	for host, want := range map[string]string{
		"127.0.0.1":  "loopback",
		"::1":        "not IPv4",
		"0.0.0.0":    "is not a server's address",
		"224.0.0.1":  "is not a server's address",
		"198.18.0.2": "one of the lab's own addresses (198.18.0.0/22)",
		"198.18.3.2": "one of the lab's own addresses",
	} {
		if _, err := OutsideAddr(host); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", host, err, want)
		}
	}
	if got, err := OutsideAddr("198.18.4.1"); got != "198.18.4.1" || err != nil {
		t.Errorf("198.18.4.1 is outside the lab's /22: %q, %v", got, err)
	}
}
