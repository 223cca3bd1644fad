package machinelock

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestSecondLockIsRefusedWithTheHolderNamed(t *testing.T) {
	dir := t.TempDir()
	first, err := Acquire(context.Background(), dir, Holder{Command: "study bandwidth"}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Release()
	if err := first.SetLab("4ee4e7"); err != nil {
		t.Fatal(err)
	}
	_, err = Acquire(context.Background(), dir, Holder{Command: "run"}, false, nil)
	if !errors.Is(err, ErrBusy) {
		t.Fatalf("second lock without waiting: %v, want ErrBusy", err)
	}
	want := "study bandwidth, lab 4ee4e7, pid " + strconv.Itoa(os.Getpid())
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not name %q", err, want)
	}
}

func TestWaiterGetsTheLockAfterRelease(t *testing.T) {
	dir := t.TempDir()
	defer func(d time.Duration) { PollEvery = d }(PollEvery)
	PollEvery = 10 * time.Millisecond
	first, err := Acquire(context.Background(), dir, Holder{Command: "study transport", Lab: "aaaaaa"}, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	waits := make(chan Holder, 10)
	got := make(chan *Lock, 1)
	go func() {
		l, err := Acquire(context.Background(), dir, Holder{Command: "run"}, true, func(h Holder) { waits <- h })
		if err != nil {
			t.Error(err)
		}
		got <- l
	}()
	select {
	case h := <-waits:
		if h.Command != "study transport" || h.Lab != "aaaaaa" {
			t.Errorf("waiter saw holder %+v", h)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("waiter never reported waiting")
	}
	time.Sleep(100 * time.Millisecond) // several polls: onWait must not repeat for one holder
	select {
	case l := <-got:
		t.Fatalf("waiter got the lock while it was held: %+v", l)
	default:
	}
	first.Release()
	var second *Lock
	select {
	case second = <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("waiter did not get the released lock")
	}
	defer second.Release()
	if len(waits) != 0 {
		t.Errorf("onWait called %d more times for the same holder", len(waits))
	}
	if second.WaitedFor == nil || second.WaitedFor.Command != "study transport" || second.Waited < 100*time.Millisecond {
		t.Errorf("waited %s for %+v", second.Waited, second.WaitedFor)
	}
	// The holder file now names the second holder.
	if h := readHolder(dir); h.Command != "run" {
		t.Errorf("holder file names %+v after hand-over", h)
	}
}

func TestWaitEndsWithTheContext(t *testing.T) {
	dir := t.TempDir()
	first, err := Acquire(context.Background(), dir, Holder{Command: "run"}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Release()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err = Acquire(ctx, dir, Holder{Command: "run"}, true, nil)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "held by run, pid") {
		t.Fatalf("wait past the deadline: %v", err)
	}
}

func TestReleaseFreesTheLockAndRemovesTheHolder(t *testing.T) {
	dir := t.TempDir()
	l, err := Acquire(context.Background(), dir, Holder{Command: "run"}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if l.Holder().Pid != os.Getpid() || l.Holder().Since.IsZero() {
		t.Errorf("holder defaults not filled: %+v", l.Holder())
	}
	l.Release()
	l.Release() // twice is fine
	var nilLock *Lock
	nilLock.Release()
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("files left after release: %v", ents)
	}
	again, err := Acquire(context.Background(), dir, Holder{Command: "run"}, false, nil)
	if err != nil {
		t.Fatalf("lock not free after release: %v", err)
	}
	again.Release()
}

func TestHolderString(t *testing.T) {
	for _, c := range []struct {
		h    Holder
		want string
	}{
		{Holder{Pid: 812, Command: "study bandwidth", Lab: "4ee4e7"}, "study bandwidth, lab 4ee4e7, pid 812"},
		{Holder{Pid: 9, Command: "run"}, "run, pid 9"},
		{Holder{}, "another measurement (its holder file is unreadable)"},
	} {
		if got := c.h.String(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.h, got, c.want)
		}
	}
}

// Release unlinks the lock file while waiters may hold it open: however their opens and
// flocks interleave with the unlink, never two holders at once.
func TestNeverTwoHoldersAcrossUnlink(t *testing.T) {
	dir := t.TempDir()
	defer func(d time.Duration) { PollEvery = d }(PollEvery)
	PollEvery = time.Millisecond
	var inside, maxInside atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Go(func() {
			for j := 0; j < 20; j++ {
				l, err := Acquire(context.Background(), dir, Holder{Command: "run"}, true, nil)
				if err != nil {
					t.Error(err)
					return
				}
				n := inside.Add(1)
				if n > maxInside.Load() {
					maxInside.Store(n)
				}
				time.Sleep(100 * time.Microsecond)
				inside.Add(-1)
				l.Release()
			}
		})
	}
	wg.Wait()
	if maxInside.Load() != 1 {
		t.Errorf("%d holders at once", maxInside.Load())
	}
}

func TestPeekNamesTheHolderWithoutTakingTheLock(t *testing.T) {
	dir := t.TempDir()
	if _, busy := Peek(dir); busy {
		t.Fatal("busy with no lock")
	}
	l, err := Acquire(context.Background(), dir, Holder{Command: "study transport"}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if h, busy := Peek(dir); !busy || h.Command != "study transport" {
		t.Errorf("Peek while held: %+v %v", h, busy)
	}
	l.Release()
	if _, busy := Peek(dir); busy {
		t.Error("busy after release")
	}
}
