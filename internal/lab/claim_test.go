package lab

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/execx"
	"github.com/wirelab/wirelab/internal/machinelock"
)

func TestClaimRecordsWaitAndOtherLabs(t *testing.T) {
	dir := t.TempDir()
	defer func(d time.Duration) { machinelock.PollEvery = d }(machinelock.PollEvery)
	machinelock.PollEvery = 10 * time.Millisecond
	f := &execx.Fake{Responses: map[string]string{"ip netns list": "wl-byhand-wire\nwl-mine01-wire\n"}}
	first, err := ClaimMachine(context.Background(), ClaimOptions{StateDir: dir, Command: "study bandwidth", Runner: f})
	if err != nil {
		t.Fatal(err)
	}
	if err := first.SetLab("4ee4e7"); err != nil {
		t.Fatal(err)
	}
	if first.Owner.Pid != os.Getpid() || first.Owner.Command != "study bandwidth" || first.Owner.StartTicks == 0 {
		t.Errorf("owner %+v", first.Owner)
	}
	if _, err := ClaimMachine(context.Background(), ClaimOptions{StateDir: dir, Command: "run", NoWait: true, Runner: f}); !errors.Is(err, machinelock.ErrBusy) ||
		!strings.Contains(err.Error(), "study bandwidth, lab 4ee4e7, pid") {
		t.Fatalf("--no-wait: %v", err)
	}
	var progress bytes.Buffer
	go func() { time.Sleep(150 * time.Millisecond); first.Release() }()
	second, err := ClaimMachine(context.Background(), ClaimOptions{StateDir: dir, Command: "run", Progress: &progress, Runner: f})
	if err != nil {
		t.Fatal(err)
	}
	defer second.Release()
	if !strings.HasPrefix(progress.String(), "waiting for study bandwidth, lab 4ee4e7, pid ") ||
		!strings.Contains(progress.String(), "note: labs up outside any measurement share the CPUs: byhand, mine01") {
		t.Errorf("progress %q", progress.String())
	}
	_ = second.SetLab("mine01")
	m := second.Machine(context.Background())
	if !m.Exclusive || m.WaitedS < 0.1 || !strings.HasPrefix(m.WaitedFor, "study bandwidth, lab 4ee4e7") {
		t.Errorf("machine %+v", m)
	}
	if len(m.OtherLabs) != 1 || m.OtherLabs[0] != "byhand" {
		t.Errorf("other labs %v, want the lab by hand and not our own", m.OtherLabs)
	}
}
