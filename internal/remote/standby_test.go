package remote

import (
	"context"
	"strings"
	"testing"

	"github.com/wirelab/wirelab/internal/engine"
	"github.com/wirelab/wirelab/internal/lab"
	"github.com/wirelab/wirelab/internal/postgres"
	"github.com/wirelab/wirelab/internal/study"
)

func TestStartServerRefusesAStandbyItCannotMake(t *testing.T) {
	var b Backend // refused before any host is looked at
	_, err := b.StartServer(context.Background(), study.Server{Host: lab.Replica,
		DB: lab.DBOptions{Engine: engine.Postgres, Upstream: &postgres.Upstream{Host: "198.18.0.2", Port: 5432, User: "repl"}}})
	if err == nil || !strings.Contains(err.Error(), "PostgreSQL standby") {
		t.Errorf("err = %v, want the standby refused by name", err)
	}
}
