package hostinfo

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/wirelab/wirelab/internal/procfs"
	"github.com/wirelab/wirelab/internal/result"
)

// Paths are where Read finds a machine's files: the real /proc and /sys, or a fixture.
type Paths struct {
	Proc, Sys string
}

// System is the running machine's /proc and /sys.
var System = Paths{Proc: procfs.DefaultRoot, Sys: "/sys"}

// Read describes the machine behind p. cores is the CPU count its processes may use (the
// caller's runtime.NumCPU(): the scheduler's affinity, what a verdict can count on, which
// /proc/cpuinfo does not know). Only the kernel release is required: a machine without it
// is not a Linux /proc. Role and Name are left for the caller.
func Read(p Paths, cores int) (result.Host, error) {
	h := result.Host{Cores: cores}
	proc := procfs.At(p.Proc)
	release, err := proc.Sysctl("kernel/osrelease")
	if err != nil {
		return h, fmt.Errorf("read the kernel release: %w", err)
	}
	h.Kernel = release
	if b, err := proc.ReadFile("cpuinfo"); err == nil {
		h.CPUModel = cpuModel(string(b))
	}
	if b, err := proc.ReadFile("meminfo"); err == nil {
		h.MemoryBytes = memTotal(string(b))
	}
	if b, err := os.ReadFile(filepath.Join(p.Sys, "devices/system/clocksource/clocksource0/current_clocksource")); err == nil {
		h.ClockSource = strings.TrimSpace(string(b))
	}
	return h, nil
}

// Local is this machine, as the lab's single host (client and server share it).
func Local() result.Host {
	h, _ := Read(System, runtime.NumCPU()) // a missing file leaves its field empty
	h.Cores = runtime.NumCPU()
	h.Role, h.Name = result.SharedRole, "this machine"
	return h
}

// cpuModel is the first "model name" of /proc/cpuinfo (x86), else its "Model" (arm boards
// that name themselves), else "".
func cpuModel(cpuinfo string) string {
	fallback := ""
	for _, line := range strings.Split(cpuinfo, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(k) {
		case "model name":
			return strings.TrimSpace(v)
		case "Model":
			if fallback == "" {
				fallback = strings.TrimSpace(v)
			}
		}
	}
	return fallback
}

// memTotal is MemTotal of /proc/meminfo in bytes, 0 when absent.
func memTotal(meminfo string) int64 {
	for _, line := range strings.Split(meminfo, "\n") {
		var kb int64
		if _, err := fmt.Sscanf(line, "MemTotal: %d kB", &kb); err == nil {
			return kb * 1024
		}
	}
	return 0
}

// Marshal encodes h as the agent's one line of JSON.
func Marshal(h result.Host) ([]byte, error) {
	b, err := json.Marshal(h)
	if err != nil {
		return nil, fmt.Errorf("encode host facts: %w", err)
	}
	return append(b, '\n'), nil
}

// ErrNoFacts is returned when an agent's output holds no usable host facts.
var ErrNoFacts = errors.New("no host facts")

// Parse reads the agent's line back. A host that reported no cores is refused: every
// verdict of its side would divide by it.
func Parse(out []byte) (result.Host, error) {
	var h result.Host
	if err := json.Unmarshal(out, &h); err != nil {
		return h, fmt.Errorf("%w: %q is not the agent's JSON line: %v", ErrNoFacts, strings.TrimSpace(string(out)), err)
	}
	if h.Cores < 1 {
		return h, fmt.Errorf("%w: the agent reported %d cores", ErrNoFacts, h.Cores)
	}
	return h, nil
}
