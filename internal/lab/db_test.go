package lab

import "testing"

func TestCheckBufferPool(t *testing.T) {
	for s, ok := range map[string]bool{"512M": true, "1G": true, "16M": true, "65536K": true, "2g": false,
		"": false, "1": false, "8M": false, "0G": false, "-1G": false, "1.5G": false, "1GB": false, "G": false, "2000G": false} {
		if err := CheckBufferPool(s); (err == nil) != ok {
			t.Errorf("CheckBufferPool(%q) = %v, want ok %v", s, err, ok)
		}
	}
}
