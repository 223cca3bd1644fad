package hostinfo

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/wirelab/wirelab/internal/result"
)

func fixture(name string) Paths {
	return Paths{Proc: filepath.Join("testdata", name, "proc"), Sys: filepath.Join("testdata", name, "sys")}
}

func TestRead(t *testing.T) {
	for _, c := range []struct {
		dir   string
		cores int
		want  result.Host
	}{
		{"epyc2", 2, result.Host{Cores: 2, CPUModel: "AMD EPYC", MemoryBytes: 24684084 * 1024, Kernel: "6.18.44-fc-v669", ClockSource: "tsc"}},
		{"xeon48", 48, result.Host{Cores: 48, CPUModel: "Intel(R) Xeon(R) Gold 6248R CPU @ 3.00GHz", MemoryBytes: 197581888 * 1024,
			Kernel: "6.1.0-28-amd64", ClockSource: "tsc"}},
	} {
		t.Run(c.dir, func(t *testing.T) {
			got, err := Read(fixture(c.dir), c.cores)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("Read = %+v\nwant   %+v", got, c.want)
			}
		})
	}
	if _, err := Read(fixture("nokernel"), 1); err == nil {
		t.Error("a directory without a kernel release was read as a machine")
	}
}

func TestCPUModelArm(t *testing.T) {
	const pi = "processor\t: 0\nBogoMIPS\t: 108.00\nCPU part\t: 0xd08\n\nHardware\t: BCM2835\nModel\t\t: Raspberry Pi 4 Model B Rev 1.4\n"
	if got := cpuModel(pi); got != "Raspberry Pi 4 Model B Rev 1.4" {
		t.Errorf("cpuModel(arm) = %q", got)
	}
}

func TestMarshalParse(t *testing.T) {
	h, err := Read(fixture("xeon48"), 48)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse(b)
	if err != nil || back != h {
		t.Errorf("Parse(Marshal(h)) = %+v, %v; want %+v", back, err, h)
	}
	for _, bad := range []string{"", "mktemp: failed", `{"cores":0,"kernel":"6.1"}`} {
		if _, err := Parse([]byte(bad)); !errors.Is(err, ErrNoFacts) {
			t.Errorf("Parse(%q) = %v, want ErrNoFacts", bad, err)
		}
	}
}
