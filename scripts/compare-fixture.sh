#!/usr/bin/env bash
# compare-fixture: the real runs behind `wirelab compare`'s done-when test
# (internal/compare/backtoback_test.go, TestBackToBackRuns).
#
# ROUNDS rounds (10), each three `wirelab run` points back to back, one thread count, the
# same workload and build: A at RATE_A (20mbit), A again, and B at RATE_B (18mbit), each
# --duration 60s. At 20mbit oltp_read_only is bandwidth-bound, so B is a real 10% change
# of TPS. The test expects "~" for A against A again and a change called for A against B
# in at least 9 rounds of 10. Each run's results.json is kept, trimmed to what compare
# reads (the latency histograms, profiles and link read-backs dropped), in
#   internal/compare/testdata/back-to-back/round-NN/{a,a2,b}/results.json
# with README.md there saying the command, the dates, the machine and the load of each run.
# The old fixture is replaced only when every round finished.
#
# Needs root, jq and bin/wirelab (make build), on a quiet machine: each run takes the
# machine lock (it waits for another measurement), and the test refuses runs that did not
# hold it. About 30 runs of ~1.5-2 min: an hour.
#   ROUNDS=10 THREADS=8 WORKLOAD=oltp_read_only DURATION=60s scripts/compare-fixture.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/benchpage.sh
BENCH_CMD=$(bench_command ROUNDS THREADS WORKLOAD DURATION RATE_A RATE_B -- scripts/compare-fixture.sh)
WIRELAB=${WIRELAB:-bin/wirelab}
ROUNDS=${ROUNDS:-10}
THREADS=${THREADS:-8}
WORKLOAD=${WORKLOAD:-oltp_read_only}
DURATION=${DURATION:-60s}
RATE_A=${RATE_A:-20mbit}
RATE_B=${RATE_B:-18mbit}
OUT=internal/compare/testdata/back-to-back

[[ -x $WIRELAB ]] || { echo "compare-fixture: $WIRELAB missing: make build" >&2; exit 1; }
[[ $(id -u) == 0 ]] || { echo "compare-fixture: wirelab run builds a lab: needs root" >&2; exit 1; }
command -v jq >/dev/null || { echo "compare-fixture: needs jq (apt-get install jq)" >&2; exit 1; }
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || { echo "compare-fixture: ROUNDS=$ROUNDS: want a whole number >= 1" >&2; exit 1; }
[[ $THREADS =~ ^[1-9][0-9]*$ ]] || { echo "compare-fixture: THREADS=$THREADS: want one thread count" >&2; exit 1; }

work=$(mktemp -d /tmp/wirelab-compare-fixture-XXXXXX)
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
new=$work/back-to-back
mkdir -p "$new"

# trim keeps what compare reads of a run (and what says how it was measured): the points'
# conditions, figures and per-second TPS and p95.
trim='
  del(.environment.link_as_read_back, .environment.hosts, .environment.server.settings)
  | .points |= map(
      del(.lat_histogram, .profile, .lab_cost, .wire_check, .clients, .replication, .sync)
      | .seconds |= ((. // []) | map({t, tps, lat_p95_ms} + (if .warmup then {warmup} else {} end))))'

# run NAME RATE ROUND: one `wirelab run` point into round ROUND's NAME, one line of the
# manifest.
run() {
	local name=$1 rate=$2 round=$3 dir start load
	dir=$new/round-$round/$name
	mkdir -p "$dir"
	start=$(bench_now)
	load=$(bench_load)
	"$WIRELAB" run --rate "$rate" --threads "$THREADS" --workload "$WORKLOAD" \
		--duration "$DURATION" --out "$work/runs/$round-$name" >"$work/runs-$round-$name.log" 2>&1 ||
		{ echo "compare-fixture: round $round $name failed; its log:" >&2; tail -20 "$work/runs-$round-$name.log" >&2; exit 1; }
	jq "$trim" "$work/runs/$round-$name/results.json" >"$dir/results.json"
	printf '| %s | %s | %s | %s | %s | %s |\n' "$round" "$name" "$rate" "$start" "$load" \
		"$(jq -r '.points[0].tps | . * 100 | round / 100' "$dir/results.json")" >>"$work/manifest"
	echo "compare-fixture: round $round $name ($rate): $(tail -1 "$work/manifest")"
}

mkdir -p "$work/runs"
began=$(bench_now)
for ((i = 1; i <= ROUNDS; i++)); do
	round=$(printf '%02d' "$i")
	run a "$RATE_A" "$round"
	run a2 "$RATE_A" "$round"
	run b "$RATE_B" "$round"
done

{
	echo "# compare's back-to-back runs"
	echo
	echo "Written by \`scripts/compare-fixture.sh\`; read by \`TestBackToBackRuns\`"
	echo "(\`go test -run BackToBack -v ./internal/compare\` prints its counts)."
	echo
	echo "- command: \`$BENCH_CMD\`"
	echo "- each run: \`wirelab run --rate RATE --threads $THREADS --workload $WORKLOAD --duration $DURATION\`"
	echo "- date: $began to $(bench_now) UTC"
	echo "- machine: $(bench_machine)"
	echo
	echo "| round | run | rate | started (UTC) | load (1, 5, 15 min) | TPS |"
	echo "|---|---|---|---|---|---|"
	cat "$work/manifest"
} >"$new/README.md"

rm -rf "$OUT"
mkdir -p "$(dirname "$OUT")"
cp -r "$new" "$OUT"
echo "compare-fixture: $ROUNDS rounds in $OUT; now: go test -run BackToBack -v ./internal/compare"
