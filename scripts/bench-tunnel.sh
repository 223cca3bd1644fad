#!/usr/bin/env bash
# Benchmarks of internal/tunnel, printed as markdown tables.
#   1. loopback throughput (no shaping): direct, two socat hops, tunnel entry+exit off/zstd/auto
#   2. ratio and CPU per MB on MySQL-like traffic: MySQL zlib compression, DTLE, tunnel zstd
#   3. in the lab (root; real MariaDB + sysbench oltp_read_only, 32 threads): at 20 mbit the
#      tunnel against --mysql-compression (goal >= 1.5x), unshaped the tunnel's auto mode
#      against plain (goal >= 0.9x)
#   4. framing encode/decode throughput and allocations, 5. request round-trip latency
# Parts 1, 2, 4, 5 are loopback only and need no root; part 3 builds private labs (one per
# row, WIRELAB_STATE_DIR under a temp dir unless set) and needs bin/wirelab (make build).
# Each lab row records /proc/loadavg before and after: the lab shares the machine's cores.
# Usage: scripts/bench-tunnel.sh [benchtime]   (default 2s; the ratio runs use 3x)
#   PARTS="1 2 3 4 5"   which parts to run;  LAB_DURATION=20s LAB_WARMUP=3s LAB_THREADS=32
set -euo pipefail
cd "$(dirname "$0")/.."
export GOFLAGS=-mod=mod
bt=${1:-2s}
parts=" ${PARTS:-1 2 3 4 5} "
want() { [[ $parts == *" $1 "* ]]; }
run() { go test -run '^$' -bench "$1" -benchtime "$2" ./internal/tunnel/ | grep '^Benchmark'; }

table() { # $1 = header, $2.. = metric units to show
	local header=$1; shift
	awk -v header="$header" -v units="$*" '
	BEGIN { n = split(units, u, " "); printf "| %s |", header; for (i = 1; i <= n; i++) printf " %s |", u[i]; printf "\n|---|"; for (i = 1; i <= n; i++) printf "---:|"; printf "\n" }
	{ name = $1; sub(/^Benchmark/, "", name); sub(/-[0-9]+$/, "", name); printf "| %s |", name
	  for (i = 1; i <= n; i++) { v = "-"; for (j = 3; j < NF; j++) if ($(j+1) == u[i]) v = $j; printf " %s |", v } printf "\n" }'
}

# lab_row NAME ARGS...: one `wirelab run` in a private lab; prints "NAME|tps|lat|cpu_s|cpu_c|util|bottleneck|load"
lab_row() {
	local name=$1; shift
	local out="$labdir/$name" before after
	before=$(cut -d' ' -f1-3 /proc/loadavg)
	if ! bin/wirelab run --threads "${LAB_THREADS:-32}" --duration "${LAB_DURATION:-20s}" --warmup "${LAB_WARMUP:-3s}" \
		--out "$out" "$@" >"$out.log" 2>&1; then
		echo "lab row $name failed; see $out.log" >&2
		tail -5 "$out.log" >&2
		echo "$name|0|-|-|-|-|failed|$before"
		return
	fi
	after=$(cut -d' ' -f1-3 /proc/loadavg)
	jq -r --arg n "$name" --arg l "$before → $after" '.points[0] | [$n, (.tps*10|round/10), (.lat_avg_ms|round),
		(.cpu_server*100|round/100), (.cpu_client*100|round/100), (.link_utilization*100|round|tostring+"%"), .bottleneck, $l] | join("|")' "$out/results.json"
}

lab() {
	if [[ $(id -u) != 0 ]]; then echo "(part 3 needs root: skipped)"; return; fi
	[[ -x bin/wirelab ]] || { echo "bin/wirelab missing: make build" >&2; return 1; }
	labdir=$(mktemp -d /tmp/bench-tunnel.XXXXXX)
	export WIRELAB_STATE_DIR=${WIRELAB_STATE_DIR:-$labdir/state}
	local rows=() r
	for r in "20mbit plain|--rate 20mbit" "20mbit compression|--rate 20mbit --compression" \
		"20mbit tunnel auto|--rate 20mbit --channel tunnel --tunnel-compress auto" \
		"20mbit tunnel zstd|--rate 20mbit --channel tunnel --tunnel-compress zstd" \
		"unlimited plain|--rate unlimited" "unlimited compression|--rate unlimited --compression" \
		"unlimited tunnel auto|--rate unlimited --channel tunnel --tunnel-compress auto"; do
		# shellcheck disable=SC2086 # the flags are meant to split
		rows+=("$(lab_row "${r%%|*}" ${r#*|})")
	done
	echo "| case | TPS | lat avg ms | cpu server | cpu client | link util | bottleneck | loadavg before → after |"
	echo "|---|---:|---:|---:|---:|---:|---|---|"
	printf '%s\n' "${rows[@]}" | awk -F'|' '{ printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7, $8 }'
	echo
	printf '%s\n' "${rows[@]}" | awk -F'|' '{ tps[$1] = $2 }
	function ratio(a, b, goal) { if (tps[b] > 0) printf "| %s / %s | %.2fx | %s |\n", a, b, tps[a] / tps[b], goal; else printf "| %s / %s | - | %s |\n", a, b, goal }
	END { print "| ratio | value | goal |"; print "|---|---:|---|"
	      ratio("20mbit tunnel auto", "20mbit compression", ">= 1.5x")
	      ratio("20mbit tunnel zstd", "20mbit compression", "(reference)")
	      ratio("20mbit compression", "20mbit plain", "(reference)")
	      ratio("unlimited tunnel auto", "unlimited plain", ">= 0.9x")
	      ratio("unlimited compression", "unlimited plain", "(reference; measured 0.4x before)") }'
	echo
	echo "(results.json and logs: $labdir)"
}

if want 1; then
	echo "## 1. Loopback throughput, no shaping ($(nproc) cores; cpu-ms/MB includes the client and sink, see the direct row)"
	run 'Throughput' "$bt" | table "case" MB/s cpu-ms/MB
	echo
fi
if want 2; then
	echo "## 2. Compression ratio and CPU per MB on MySQL-like traffic (same bytes; one core)"
	run 'Ratio' 3x | table "corpus/method" ratio cpu-ms/MB MB/s
	echo
fi
if want 3; then
	echo "## 3. In the lab: sysbench oltp_read_only, ${LAB_THREADS:-32} threads, ${LAB_DURATION:-20s} (+${LAB_WARMUP:-3s} warmup), $(nproc) cores"
	lab
	echo
fi
if want 4; then
	echo "## 4. Framing (64KiB groups of binlog-like bytes)"
	run 'Frame' "$bt" | table "op" MB/s ratio B/op allocs/op
	echo
fi
if want 5; then
	echo "## 5. Round trip of a 40-byte request through entry+exit (loopback)"
	run 'PingPong' "$bt" | table "case" ns/op cpu-us/op allocs/op
fi
