#!/usr/bin/env bash
# bench-link: how closely the wire delivers what was asked, over rates × RTTs.
# Brings one lab up (no database) in a private state dir, then for each cell: `wirelab link
# set`, `wirelab link check --json`, one markdown row. Needs root, iperf3 and jq. Tears the lab
# down on exit. The sweep stops starting new cells after BUDGET seconds (default 540), so the
# whole run stays under 10 minutes; skipped cells are listed. Writes docs/bench/link.md
# (scripts/benchpage.sh) and prints the table.
#   RATES="1mbit 10mbit" RTTS="1ms 40ms" DURATION=4s SHAPER=auto scripts/bench-link.sh
#
# Columns: "up/ceil" and "down/ceil" are iperf3 TCP goodput over the goodput a perfect cap
# allows (rate × 1448/1514: HTB counts whole Ethernet frames, iperf3 counts payload); target
# 0.97-1.00. "rtt err" is the median idle RTT (TCP echo) minus the asked RTT, so it includes
# the bare veth path; target |err| ≤ 0.3 ms + 2% of the asked RTT ("allowed").
# "undelayed" counts packets the delayer could not delay (queue full); target 0. "load" is the
# 1-minute load average of this (shared) machine when the cell started.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/benchpage.sh
BENCH_CMD=$(bench_command RATES RTTS EXTRA DURATION SHAPER BUDGET -- scripts/bench-link.sh)
bench_page docs/bench/link.md scripts/bench-link.sh "bench-link: asked vs measured wire"
WIRELAB=${WIRELAB:-bin/wirelab}
RATES=${RATES:-"1mbit 10mbit 50mbit 100mbit 1gbit"}
RTTS=${RTTS:-"1ms 10ms 40ms 100ms 250ms"}
EXTRA=${EXTRA:-"unlimited:10ms"} # rate:rtt cells after the sweep (delayer capacity)
DURATION=${DURATION:-4s}
SHAPER=${SHAPER:-auto}
BUDGET=${BUDGET:-540}

state=$(mktemp -d /tmp/wirelab-bench-link-XXXXXX)
export WIRELAB_STATE_DIR=$state
lab=""
cleanup() {
  if [ -n "$lab" ]; then "$WIRELAB" down --lab "$lab" >/dev/null 2>&1 || true; fi
  rm -rf "$state"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

"$WIRELAB" up --no-db >/dev/null
lab=$(basename "$(ls "$state"/*.json | head -1)" .json)
[ -n "$lab" ] || { echo "bench-link: no lab state after 'wirelab up'" >&2; exit 1; }

# sweep: one row per cell, then the skipped cells, the legend and the sweep's length.
sweep() {
  echo "| rate | rtt | up | up/ceil | down | down/ceil | rtt median | rtt err ms | allowed ms | rtt p99 | undelayed | verdict | load |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
  local cells=() skipped=() rate rtt cell load j start=$SECONDS
  for rate in $RATES; do for rtt in $RTTS; do cells+=("$rate:$rtt"); done; done
  for cell in $EXTRA; do cells+=("$cell"); done
  for cell in "${cells[@]}"; do
    rate=${cell%%:*}; rtt=${cell#*:}
    if (( SECONDS - start > BUDGET )); then skipped+=("$cell"); continue; fi
    "$WIRELAB" link set --lab "$lab" --rate "$rate" --rtt "$rtt" --shaper "$SHAPER" >/dev/null
    load=$(cut -d' ' -f1 /proc/loadavg)
    # link check exits 1 when the verdict fails; the JSON is still printed.
    j=$("$WIRELAB" link check --lab "$lab" --duration "$DURATION" --json 2>/dev/null || true)
    if [ -z "$j" ]; then echo "| $rate | $rtt | check failed | | | | | | | | | | $load |"; continue; fi
    jq -r --arg rate "$rate" --arg rtt "$rtt" --arg load "$load" '
      def mbit: (. / 1e6 * 100 | round / 100 | tostring) + "M";
      def r3: . * 1000 | round / 1000;
      def ceil($a): if $a == 0 then "-" else (. / ($a * 1448 / 1514) | r3 | tostring) end;
      .asked_rate_bps as $ar |
      "| \($rate) | \($rtt) | \(.up_bps|mbit) | \(.up_bps|ceil($ar)) | \(.down_bps|mbit) | \(.down_bps|ceil($ar)) | \(.rtt_median_ms|r3) | \(.rtt_median_ms - .asked_rtt_ms|r3) | \(0.3 + 0.02 * .asked_rtt_ms|r3) | \(.rtt_p99_ms|r3) | \(.undelayed_packets) | \(.verdict) | \($load) |"' <<<"$j"
  done
  if (( ${#skipped[@]} > 0 )); then echo; echo "Skipped (over the ${BUDGET}s budget): ${skipped[*]}."; fi
  echo
  echo "\`wirelab link check --duration $DURATION\` per cell, shaper $SHAPER. up/ceil, down/ceil: iperf3 TCP goodput over"
  echo "the goodput ceiling of the cap (rate × 1448/1514: HTB counts whole frames, iperf3 payload); target 0.97-1.00."
  echo "rtt err: idle median RTT (TCP echo) minus the asked RTT, the bare veth path included; target within \"allowed\""
  echo "(0.3 ms + 2%). verdict: \`link check\`'s own. load: the 1-minute load average when the cell started."
  echo "The sweep took $(( SECONDS - start )) s."
}
bench_section 1 "Rates × RTTs" sweep
