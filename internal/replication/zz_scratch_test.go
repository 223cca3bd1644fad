package replication

import (
	"context"
	"log/slog"
	"os"
	"strconv"
	"testing"
	"time"
)

func TestScratch(t *testing.T) {
	if os.Getenv("SCRATCH") == "" {
		t.Skip()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	lvl, _ := strconv.Atoi(os.Getenv("LEVEL"))
	grp, _ := time.ParseDuration(os.Getenv("GROUP"))
	o := Options{Channels: []Channel{Tunnel}, Scenarios: []int{3}, RateCapBps: 2_000_000, LagQPS: 300, Loads: []int{600}, Delay: 125 * time.Millisecond,
		TunnelLevel: lvl, TunnelGroup: grp, RTTs: []time.Duration{0}, Duration: 15 * time.Second, AbortLag: 10 * time.Second, CatchUpTimeout: 2 * time.Minute, Tables: 10, TableSize: 10000,
		Threads: 4, RandType: "uniform", BufferPool: "256M", TunnelCompress: "zstd", Rule: DefaultRule,
		Fault: Fault{At: 4 * time.Second, For: 3 * time.Second}, OutDir: "/tmp/scratch-out", SearchFactor: 2}
	os.MkdirAll(o.OutDir, 0o755)
	run, err := Run(ctx, ctx, o, Env{Logger: log, StateDir: "/tmp/scratch-state", Self: "/tmp/wl", Progress: os.Stderr})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	t.Logf("%d points", len(run.Points))
}
