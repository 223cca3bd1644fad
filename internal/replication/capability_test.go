package replication

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/link"
	"github.com/wirelab/wirelab/internal/study"
)

// capBackend is a backend with the capabilities the replication study asserts; the
// methods of study.Backend it does not need are the embedded nil one's (a call panics).
type capBackend struct {
	study.Backend
	rtts    []time.Duration
	probes  int
	dropped []string
	healed  int
}

func (b *capBackend) ProbeRTT(context.Context, int, time.Duration) ([]time.Duration, error) {
	b.probes++
	return b.rtts, nil
}

func (b *capBackend) DropWire(_ context.Context, host string) (func() error, error) {
	b.dropped = append(b.dropped, host)
	return func() error { b.healed++; return nil }, nil
}

// plainBackend has none of the capabilities (real hosts without a probe or a drop).
type plainBackend struct{ study.Backend }

func TestRTTProbeMeasuresOncePerWireOnABackendThatProbes(t *testing.T) {
	b := &capBackend{rtts: []time.Duration{9 * time.Millisecond, 10 * time.Millisecond, 30 * time.Millisecond}}
	e := &study.Env{Backend: b, Cond: link.Condition{Delay: 5 * time.Millisecond}}
	var r RTTProbe
	r.Measure(context.Background(), e, "source")
	r.Measure(context.Background(), e, "source")
	if b.probes != 1 || r.Ms != 10 {
		t.Errorf("probes %d, median %.1f ms; want one probe of the wire, median 10 ms", b.probes, r.Ms)
	}
	e.Cond.Delay = 10 * time.Millisecond
	r.Measure(context.Background(), e, "source")
	if b.probes != 2 {
		t.Errorf("a new wire is not probed again: %d probes", b.probes)
	}
	var none RTTProbe
	none.Measure(context.Background(), &study.Env{Backend: plainBackend{}}, "source")
	if none.Ms != 0 {
		t.Errorf("a backend that cannot probe: %.1f ms, want none", none.Ms)
	}
}

func TestFaultDropsTheReplicasWireThroughTheBackend(t *testing.T) {
	b := &capBackend{}
	r := &Study{e: &study.Env{Backend: b, Logger: slog.New(slog.DiscardHandler)}}
	if err := r.injectFault(context.Background(), r.e, Fault{At: time.Millisecond, For: time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	if len(b.dropped) != 1 || b.dropped[0] != lab.Replica || b.healed != 1 {
		t.Errorf("dropped %v, healed %d times; want the replica's wire dropped and healed once", b.dropped, b.healed)
	}
	err := r.injectFault(context.Background(), &study.Env{Backend: plainBackend{}}, Fault{At: time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "cannot drop the wire") {
		t.Errorf("a backend that cannot drop the wire: %v", err)
	}
}
