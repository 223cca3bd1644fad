package cpuidle

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Paths are the kernel files this package uses; tests point them at a temp dir.
type Paths struct {
	Device string // the PM QoS device, /dev/cpu_dma_latency
	Sysfs  string // /sys/devices/system/cpu/cpuidle, for the driver and governor names
}

// System is the running kernel's paths.
var System = Paths{Device: "/dev/cpu_dma_latency", Sysfs: "/sys/devices/system/cpu/cpuidle"}

// Hold is an open latency request; Release ends it.
type Hold struct {
	f *os.File
}

// Keep asks for 0 µs of wake-up latency on every CPU and holds the request open. The
// request counts as held only once the kernel's limit reads 0 µs back (see verify).
func Keep(p Paths) (*Hold, error) {
	f, err := os.OpenFile(p.Device, os.O_WRONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("keep CPUs awake: open %s: %w", p.Device, err)
	}
	// The device takes a native-endian s32 (or ASCII hex).
	var zero [4]byte
	binary.NativeEndian.PutUint32(zero[:], 0)
	if _, err := f.Write(zero[:]); err != nil {
		f.Close()
		return nil, fmt.Errorf("keep CPUs awake: write %s: %w", p.Device, err)
	}
	if err := verify(p); err != nil {
		f.Close()
		return nil, err
	}
	return &Hold{f: f}, nil
}

// verify reads the kernel's limit back after a request for 0 µs: any other value means
// the request did not take. A limit that cannot be read is no evidence either way; the
// request was written, and stands.
func verify(p Paths) error {
	lim, err := Limit(p)
	if err == nil && lim != 0 {
		return fmt.Errorf("keep CPUs awake: %s reads %d µs after asking for 0: not held", p.Device, lim)
	}
	return nil
}

// Release closes the request; the kernel's idle policy is back as it was. Safe on nil and
// twice.
func (h *Hold) Release() error {
	if h == nil || h.f == nil {
		return nil
	}
	err := h.f.Close()
	h.f = nil
	if err != nil {
		return fmt.Errorf("release CPU latency request: %w", err)
	}
	return nil
}

// Limit reads the kernel's current wake-up latency bound in µs, over every request held.
func Limit(p Paths) (int32, error) {
	f, err := os.Open(p.Device)
	if err != nil {
		return 0, fmt.Errorf("read CPU latency limit: %w", err)
	}
	defer f.Close()
	var b [4]byte
	if _, err := io.ReadFull(f, b[:]); err != nil {
		return 0, fmt.Errorf("read CPU latency limit: %s: %w", p.Device, err)
	}
	return int32(binary.NativeEndian.Uint32(b[:])), nil
}

// Driver names the cpuidle driver and governor ("haltpoll/haltpoll"), or "" when the
// kernel has no cpuidle (then there are no idle states to hold back anyway).
func Driver(p Paths) string {
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(p.Sysfs, name))
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(b))
	}
	d, g := read("current_driver"), read("current_governor")
	if d == "" || d == "none" {
		return ""
	}
	if g != "" {
		d += "/" + g
	}
	return d
}

// Describe is the report's line for what was asked and what happened.
func Describe(asked bool, held *Hold, err error, driver string) string {
	var s string
	switch {
	case !asked:
		s = "OS default (--keep-cpus-awake=false)"
	case held != nil:
		s = "kept awake: /dev/cpu_dma_latency held at 0 µs while measuring"
	default:
		s = "OS default: could not keep CPUs awake: " + err.Error()
	}
	if driver != "" {
		s += "; cpuidle " + driver
	}
	return s
}
