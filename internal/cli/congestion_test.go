package cli

import (
	"strings"
	"testing"
)

func TestCongestionIsRefusedWithHosts(t *testing.T) {
	err := checkCongestion(&Process{}, "cubic", true)
	if err == nil || !strings.Contains(err.Error(), "--tcp-congestion cubic") || !strings.Contains(err.Error(), "--hosts") {
		t.Errorf("checkCongestion(cubic, hosts) = %v; want a refusal naming both flags", err)
	}
	if err := checkCongestion(&Process{}, "", true); err != nil {
		t.Errorf("no --tcp-congestion with --hosts: %v", err)
	}
}
