package cpuidle

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirelab/wirelab/internal/nstest"
)

func fakePaths(t *testing.T) Paths {
	t.Helper()
	dir := t.TempDir()
	p := Paths{Device: filepath.Join(dir, "cpu_dma_latency"), Sysfs: filepath.Join(dir, "cpuidle")}
	if err := os.WriteFile(p.Device, []byte{0xff, 0xff, 0xff, 0x7f}, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestKeepWritesZeroAndHoldsUntilRelease(t *testing.T) {
	p := fakePaths(t)
	h, err := Keep(p)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p.Device)
	if len(b) < 4 || b[0] != 0 || b[1] != 0 || b[2] != 0 || b[3] != 0 {
		t.Fatalf("device got % x, want an s32 zero first", b)
	}
	if got, err := Limit(p); err != nil || got != 0 {
		t.Fatalf("Limit = %d, %v; want 0", got, err)
	}
	if err := h.Release(); err != nil {
		t.Fatal(err)
	}
	if err := h.Release(); err != nil {
		t.Fatalf("second release: %v", err)
	}
	var nilHold *Hold
	if err := nilHold.Release(); err != nil {
		t.Fatal(err)
	}
}

func TestKeepNamesTheDeviceWhenItCannot(t *testing.T) {
	p := Paths{Device: filepath.Join(t.TempDir(), "missing")}
	_, err := Keep(p)
	if err == nil || !strings.Contains(err.Error(), p.Device) {
		t.Fatalf("err = %v, want one naming %s", err, p.Device)
	}
}

// A limit that reads anything but 0 after the request means it did not take; one that
// cannot be read is no evidence against the request.
func TestVerifyReadsTheLimitBack(t *testing.T) {
	p := fakePaths(t)
	if err := os.WriteFile(p.Device, []byte{50, 0, 0, 0}, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := verify(p); err == nil || !strings.Contains(err.Error(), "reads 50 µs after asking for 0: not held") {
		t.Errorf("verify with the limit at 50 µs: %v", err)
	}
	if err := os.WriteFile(p.Device, []byte{0, 0, 0, 0}, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := verify(p); err != nil {
		t.Errorf("verify with the limit at 0: %v", err)
	}
	if err := verify(Paths{Device: filepath.Join(t.TempDir(), "unreadable")}); err != nil {
		t.Errorf("verify of an unreadable limit: %v", err)
	}
}

func TestDriver(t *testing.T) {
	p := fakePaths(t)
	if d := Driver(p); d != "" {
		t.Fatalf("no sysfs: got %q", d)
	}
	os.MkdirAll(p.Sysfs, 0o755)
	os.WriteFile(filepath.Join(p.Sysfs, "current_driver"), []byte("haltpoll\n"), 0o644)
	os.WriteFile(filepath.Join(p.Sysfs, "current_governor"), []byte("haltpoll\n"), 0o644)
	if d := Driver(p); d != "haltpoll/haltpoll" {
		t.Fatalf("got %q", d)
	}
	os.WriteFile(filepath.Join(p.Sysfs, "current_driver"), []byte("none\n"), 0o644)
	if d := Driver(p); d != "" {
		t.Fatalf("driver none: got %q", d)
	}
}

func TestDescribe(t *testing.T) {
	h := &Hold{}
	for _, c := range []struct {
		asked bool
		held  *Hold
		err   error
		want  string
	}{
		{false, nil, nil, "OS default (--keep-cpus-awake=false); cpuidle intel_idle/menu"},
		{true, h, nil, "kept awake: /dev/cpu_dma_latency held at 0 µs while measuring; cpuidle intel_idle/menu"},
		{true, nil, os.ErrPermission, "OS default: could not keep CPUs awake: permission denied; cpuidle intel_idle/menu"},
	} {
		if got := Describe(c.asked, c.held, c.err, "intel_idle/menu"); got != c.want {
			t.Errorf("got %q\nwant %q", got, c.want)
		}
	}
}

// The real device, as root: the kernel accepts the request and drops it on close.
func TestKeepRealDevice(t *testing.T) {
	nstest.SkipUnlessRoot(t)
	if _, err := os.Stat(System.Device); err != nil {
		nstest.Unavailable(t, "no PM QoS device: %v", err)
	}
	before, err := Limit(System)
	if err != nil {
		t.Fatal(err)
	}
	h, err := Keep(System)
	if err != nil {
		t.Fatal(err)
	}
	held, err := Limit(System)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Release(); err != nil {
		t.Fatal(err)
	}
	after, _ := Limit(System)
	if held != 0 {
		t.Errorf("limit while held = %d µs, want 0", held)
	}
	if after != before {
		t.Errorf("limit after release = %d µs, want it back at %d", after, before)
	}
}
