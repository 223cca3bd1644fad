#!/usr/bin/env bash
# Benchmarks of internal/tunnel, printed as markdown tables. Loopback only, no root.
#   1. throughput (no shaping): direct, two socat hops, tunnel entry+exit off/zstd/auto
#   2. ratio and CPU per MB on MySQL-like traffic: MySQL zlib compression, DTLE, tunnel zstd
#   3. framing encode/decode throughput and allocations, 4. request round-trip latency
# Usage: scripts/bench-tunnel.sh [benchtime]   (default 2s; the ratio runs use 3x)
set -euo pipefail
cd "$(dirname "$0")/.."
export GOFLAGS=-mod=mod
bt=${1:-2s}
run() { go test -run '^$' -bench "$1" -benchtime "$2" ./internal/tunnel/ | grep '^Benchmark'; }

table() { # $1 = header, $2.. = metric units to show
	local header=$1; shift
	awk -v header="$header" -v units="$*" '
	BEGIN { n = split(units, u, " "); printf "| %s |", header; for (i = 1; i <= n; i++) printf " %s |", u[i]; printf "\n|---|"; for (i = 1; i <= n; i++) printf "---:|"; printf "\n" }
	{ name = $1; sub(/^Benchmark/, "", name); sub(/-[0-9]+$/, "", name); printf "| %s |", name
	  for (i = 1; i <= n; i++) { v = "-"; for (j = 3; j < NF; j++) if ($(j+1) == u[i]) v = $j; printf " %s |", v } printf "\n" }'
}

echo "## 1. Loopback throughput, no shaping ($(nproc) cores; cpu-ms/MB includes the client and sink, see the direct row)"
run 'Throughput' "$bt" | table "case" MB/s cpu-ms/MB
echo
echo "## 2. Compression ratio and CPU per MB on MySQL-like traffic (same bytes; one core)"
run 'Ratio' 3x | table "corpus/method" ratio cpu-ms/MB MB/s
echo
echo "## 3. Framing (64KiB groups of binlog-like bytes)"
run 'Frame' "$bt" | table "op" MB/s ratio B/op allocs/op
echo
echo "## 4. Round trip of a 40-byte request through entry+exit (loopback)"
run 'PingPong' "$bt" | table "case" ns/op allocs/op
