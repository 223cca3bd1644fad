package syncrep

import (
	"context"
	"strings"
	"testing"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/study"
)

// stopOnly can stop servers but not start a Galera cluster.
type stopOnly struct{ study.Backend }

func (stopOnly) StopServer(context.Context, string, engine.Server) error { return nil }

func TestGaleraNeedsABackendThatStartsAClusterAndStopsThePair(t *testing.T) {
	for name, b := range map[string]study.Backend{"neither": struct{ study.Backend }{}, "stop only": stopOnly{}} {
		s := New(Options{})
		s.t = &Target{}
		e := &study.Env{Backend: b, Servers: make([]engine.Server, 2)}
		err := s.galeraStage(context.Background(), e, galeraMode{tuned: true})
		if err == nil || !strings.Contains(err.Error(), "--modes galera-tuned: galera runs in a namespace lab only") {
			t.Errorf("%s: err = %v, want galera refused by name", name, err)
		}
	}
}
