package procfs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// fixture is the miniature /proc of testdata (README.md there says where each file is from).
var fixture = At("testdata/proc")

func TestStatOfRealProcesses(t *testing.T) {
	cases := []struct {
		pid  int
		want Stat
	}{
		{1, Stat{PID: 1, Comm: "process_api", State: 'S', PPID: 0, UTime: 42, STime: 158, StartTime: 22}},
		{1836, Stat{PID: 1836, Comm: "sleep", State: 'S', PPID: 1798, StartTime: 100052}},
		{2076, Stat{PID: 2076, Comm: "python3", State: 'Z', PPID: 2023, StartTime: 100757}},
		{8475, Stat{PID: 8475, Comm: "sl) (x y", State: 'S', PPID: 1, StartTime: 32668}},
		{100, Stat{PID: 100, Comm: "postgres", State: 'S', PPID: 22543, UTime: 2, StartTime: 55781}},
		{200, Stat{PID: 200, Comm: "my (odd) name", State: 'S', PPID: 1, UTime: 1, STime: 1, StartTime: 55000}},
	}
	for _, c := range cases {
		got, err := fixture.Stat(c.pid)
		if err != nil || got != c.want {
			t.Errorf("Stat(%d) = %+v, %v; want %+v", c.pid, got, err, c.want)
		}
	}
	if _, err := fixture.Stat(999); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Stat of a gone pid: %v, want fs.ErrNotExist", err)
	}
}

func TestParseStatRefusesWhatIsNotAStatLine(t *testing.T) {
	for _, bad := range []string{"", "garbage", "12 (x) S 1 2", "(x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20",
		"12 (x) S one 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20"} {
		if st, err := ParseStat([]byte(bad)); err == nil {
			t.Errorf("ParseStat(%q) = %+v, want an error", bad, st)
		}
	}
}

func TestZombieIsAndAlive(t *testing.T) {
	z, err := fixture.Stat(2076)
	if err != nil {
		t.Fatal(err)
	}
	if !z.Zombie() || z.Is("python3") || fixture.Alive(2076) {
		t.Error("a zombie runs under no name: it has exited")
	}
	s, err := fixture.Stat(1836)
	if err != nil {
		t.Fatal(err)
	}
	if s.Zombie() || !s.Is("mariadbd", "sleep") || s.Is("sleep-x", "slee") || !fixture.Alive(1836) {
		t.Errorf("a sleeping %q: Is and Alive want the exact name of a live process", s.Comm)
	}
	if fixture.Alive(999) {
		t.Error("a pid with no stat is not alive")
	}
}

func TestTree(t *testing.T) {
	if got := fixture.Tree(100); !slices.Equal(got, []int{100, 101, 102}) {
		t.Errorf("Tree(100) = %v, want [100 101 102]", got)
	}
	if got := fixture.Tree(1); !slices.Equal(got, []int{1, 200, 8475}) {
		t.Errorf("Tree(1) = %v, want [1 200 8475]", got)
	}
	if got := fixture.Tree(999); len(got) != 0 {
		t.Errorf("Tree of a gone pid = %v", got)
	}
	if got := At("testdata/missing").Tree(100); got != nil {
		t.Errorf("missing root: %v", got)
	}
}

func TestCommAndCmdline(t *testing.T) {
	if c, err := fixture.Comm(1836); err != nil || c != "sleep" {
		t.Errorf("Comm(1836) = %q, %v", c, err)
	}
	if a, err := fixture.Cmdline(1836); err != nil || !slices.Equal(a, []string{"sleep", "300"}) {
		t.Errorf("Cmdline(1836) = %q, %v", a, err)
	}
	if a, err := fixture.Cmdline(2076); err != nil || a != nil {
		t.Errorf("Cmdline of a zombie = %q, %v; want none", a, err)
	}
}

func TestLoadAvg(t *testing.T) {
	l, err := fixture.LoadAvg()
	if err != nil || l.One <= 0 || l.Five <= 0 || l.Fifteen <= 0 {
		t.Errorf("LoadAvg = %+v, %v", l, err)
	}
	if got, err := ParseLoadAvg([]byte("0.42 0.31 0.25 1/231 4242\n")); err != nil || got != (LoadAvg{0.42, 0.31, 0.25}) {
		t.Errorf("ParseLoadAvg = %+v, %v", got, err)
	}
	for _, bad := range []string{"", "0.42 0.31", "x 0.31 0.25 1/2 3"} {
		if _, err := ParseLoadAvg([]byte(bad)); err == nil {
			t.Errorf("ParseLoadAvg(%q): want an error", bad)
		}
	}
}

func TestMountPoint(t *testing.T) {
	if got, err := fixture.MountPoint("cgroup2"); err != nil || got != "/sys/fs/cgroup/unified" {
		t.Errorf("MountPoint(cgroup2) = %q, %v; want the hybrid layout's /sys/fs/cgroup/unified", got, err)
	}
	if got, err := fixture.MountPoint("proc"); err != nil || got != "/proc" {
		t.Errorf("MountPoint(proc) = %q, %v", got, err)
	}
	if _, err := fixture.MountPoint("btrfs"); !errors.Is(err, ErrNoMount) {
		t.Errorf("MountPoint(btrfs) = %v, want ErrNoMount", err)
	}
}

func TestSysctl(t *testing.T) {
	for _, name := range []string{"net.ipv4.tcp_congestion_control", "net/ipv4/tcp_congestion_control"} {
		if got, err := fixture.Sysctl(name); err != nil || got != "bbr" {
			t.Errorf("Sysctl(%s) = %q, %v; want bbr", name, got, err)
		}
	}
	if got, err := fixture.Sysctl("net.ipv4.tcp_available_congestion_control"); err != nil || got != "reno bbr cubic" {
		t.Errorf("available = %q, %v", got, err)
	}
}

// TestViaReadsThroughTheGivenReader is a remote host's /proc: the same parsers, the
// host's reader, no listing.
func TestViaReadsThroughTheGivenReader(t *testing.T) {
	var asked []string
	remote := Via("", func(name string) ([]byte, error) {
		asked = append(asked, name)
		return os.ReadFile(filepath.Join("testdata", name))
	})
	st, err := remote.Stat(1836)
	if err != nil || st.Comm != "sleep" || !slices.Equal(asked, []string{"/proc/1836/stat"}) {
		t.Errorf("Stat over a reader = %+v, %v, asked %v", st, err, asked)
	}
	if _, err := remote.Stat(999); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a gone pid over a reader: %v, want the reader's fs.ErrNotExist wrapped", err)
	}
	if _, err := remote.Pids(); !errors.Is(err, ErrNoList) {
		t.Errorf("Pids over a reader: %v, want ErrNoList", err)
	}
	if (FS{}).Root() != DefaultRoot || At("").Path("net", "dev") != "/proc/net/dev" {
		t.Error("the zero FS is this machine's /proc")
	}
}

// TestThisMachine reads the live /proc: this test process's own stat.
func TestThisMachine(t *testing.T) {
	st, err := FS{}.Stat(os.Getpid())
	if err != nil || st.PID != os.Getpid() || st.PPID != os.Getppid() || st.Zombie() || st.StartTime == 0 {
		t.Errorf("own stat = %+v, %v", st, err)
	}
	if pids, err := (FS{}).Pids(); err != nil || !slices.Contains(pids, os.Getpid()) {
		t.Errorf("Pids lists %d processes without this one: %v", len(pids), err)
	}
}
