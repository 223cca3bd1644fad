#!/usr/bin/env bash
# bench-model: how far `wirelab predict` is off on links its fit never saw.
#   1. fit: `wirelab run` at 20mbit and unlimited (threads 1,8,32) -> per-transaction profiles
#   2. predict: 5mbit, 7mbit, 50mbit, --rtt 2ms, --rtt 10ms, --rtt 20ms at the same threads
#      (the lab's links: --against predicts each measured point on its own link, the lab's
#      token-bucket shaper)
#   3. measure those points with `wirelab run` and compare; goal: median error <= 5%,
#      worst <= 15%. The last column names the station whose fitted figure, replaced by the
#      one measured at that point, explains the miss.
# Writes docs/bench/model.md (scripts/benchpage.sh) and prints it. Needs root and
# bin/wirelab (make build). Each run is a private lab (WIRELAB_STATE_DIR under a temp dir).
# This script does not take the machine lock; by hand, run it under it:
#   flock /tmp/wirelab-measure.lock scripts/bench-model.sh
#   QUICK=1        3s points after a 1s warm-up (default 10s after 2s): a smoke test
#   THREADS=1,8,32 DURATION=10s WARMUP=2s
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/benchpage.sh
BENCH_CMD=$(bench_command QUICK THREADS DURATION WARMUP -- scripts/bench-model.sh)
bench_page docs/bench/model.md scripts/bench-model.sh "bench-model: the model on links its fit never saw"
WIRELAB=${WIRELAB:-bin/wirelab}
THREADS=${THREADS:-1,8,32}
if [[ -n ${QUICK:-} ]]; then DURATION=${DURATION:-3s} WARMUP=${WARMUP:-1s}; fi
DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-2s}
[[ -x $WIRELAB ]] || { echo "bench-model: $WIRELAB missing: make build" >&2; exit 1; }
[[ $(id -u) == 0 ]] || { echo "bench-model: the lab needs root" >&2; exit 1; }

work=$(mktemp -d /tmp/bench-model.XXXXXX)
export WIRELAB_STATE_DIR=${WIRELAB_STATE_DIR:-$work/state}
cleanup() { "$WIRELAB" down --all >/dev/null 2>&1 || true; }
trap cleanup EXIT
trap 'exit 130' INT TERM

# measure NAME FLAGS...: one `wirelab run` into $work/NAME (log beside it)
measure() {
	local name=$1; shift
	echo "bench-model: $name ($*)" >&2
	if ! "$WIRELAB" run "$@" --threads "$THREADS" --duration "$DURATION" --warmup "$WARMUP" \
		--out "$work/$name" >"$work/$name.log" 2>&1; then
		echo "bench-model: run $name failed; see $work/$name.log" >&2
		tail -5 "$work/$name.log" >&2
		exit 1
	fi
}

# model_bench: the fit, the predictions, the measurements, then the page's table.
model_bench() {
measure fit-20mbit --rate 20mbit
measure fit-unlimited --rate unlimited
cells=("5mbit|--rate 5mbit" "7mbit|--rate 7mbit" "50mbit|--rate 50mbit"
	"rtt-2ms|--rtt 2ms" "rtt-10ms|--rtt 10ms" "rtt-20ms|--rtt 20ms")
against=()
for t in "${cells[@]}"; do
	# shellcheck disable=SC2086 # the flags are meant to split
	measure "${t%%|*}" ${t#*|}
	against+=("$work/${t%%|*}")
done

table=$("$WIRELAB" predict --from "$work/fit-20mbit,$work/fit-unlimited" \
	--against "$(IFS=,; echo "${against[*]}")")
profile=$("$WIRELAB" predict --from "$work/fit-20mbit,$work/fit-unlimited" --json |
	jq -r '.profiles[0] | "\(.points) points; per transaction \(.wire_bytes_up|round) B up, \(.wire_bytes_down|round) B down, \(.round_trips*100|round/100) round trips; fixed cost per round trip \(.per_round_trip_ms*1000|round) µs; \(.cpu_overlap*100|round)% of the CPU beside the path; error on its own points: median \(.check_median_error*1000|round/10)%, worst \(.check_worst_error*1000|round/10)%"')
summary=$(tail -1 <<<"$table")
verdict=$(awk '{ for (i = 1; i <= NF; i++) { if ($i == "error") med = $(i+1); if ($i == "worst") worst = $(i+1) } }
	END { gsub(/[%,]/, "", med); gsub(/[%,]/, "", worst)
	      if (med + 0 <= 5 && worst + 0 <= 15) print "Goal met (median <= 5%, worst <= 15%)."
	      else printf "Goal missed: median %s%% (goal 5%%), worst %s%% (goal 15%%); see the last column and the misses below.\n", med, worst }' <<<"$summary")

# reading says how to read the table (what the model and its last column are: true of the
# code, whatever was measured), then lists the misses over 10% as this run's table has them.
# What causes a miss is not written here: the last column is the only evidence the run has.
reading() {
	cat <<MD
### Reading

The model is exact MVA of a closed network (internal/model): each sysbench thread cycles
through the lab's CPU (one station, the machine's $(nproc) shared cores, its whole CPU per
transaction), the uplink and downlink (the lab's HTB token bucket: the bytes its burst, refilled
while a thread is elsewhere, does not cover queue at the rate, and the rate caps bytes per
transaction), and a delay of round trips × (RTT + a fixed cost calibrated at one thread).
The last column replaces one fitted figure (CPU per transaction, bytes per transaction, the
round trip) by the one measured at that point and keeps the replacement that explains the
miss; "–" means no single figure does, or the error is under 5%. The lab's CPU station is
the whole machine's CPU, so anything else running shows up as CPU misses: the load averages
above say how quiet the machine was.

MD
	awk -F'|' 'NR > 2 && NF >= 9 {
		e = $6; gsub(/[ %+]/, "", e); e += 0; if (e < 0) e = -e
		if (e > 10) { n++; gsub(/^ +| +$/, "", $2); gsub(/^ +| +$/, "", $3); gsub(/^ +| +$/, "", $6)
			gsub(/^ +| +$/, "", $7); gsub(/^ +| +$/, "", $8); gsub(/^ +| +$/, "", $9)
			printf "- **%s, %s thread%s**: %s (model: %s, lab: %s); %s\n", $2, $3, ($3 == "1" ? "" : "s"), $6, $7, $8, ($9 == "–" ? "no single figure explains it" : $9) } }
		END { if (n == 0) print "Every point is within 10% of its prediction."
		      else printf "\n%d of the points are more than 10%% off.\n", n }' <<<"$table"
}

{
	echo "Points: sysbench oltp_read_only, threads $THREADS, $DURATION after a $WARMUP warm-up${QUICK:+ (QUICK=1)}."
	echo
	echo "Fit: \`wirelab run --rate 20mbit\` and \`--rate unlimited\` -> $profile."
	echo
	echo "Predicted with \`wirelab predict --from fit-20mbit,fit-unlimited --against <run>\`, then measured with \`wirelab run\`:"
	echo
	echo "$table"
	echo
	echo "$verdict"
	echo
	reading
}
}
bench_section 1 "Six links the fit never saw" model_bench
echo "(results.json and logs: $work)" >&2
