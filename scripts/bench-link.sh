#!/usr/bin/env bash
# bench-link: how closely the wire delivers what was asked, over rates × RTTs.
# Brings one lab up (no database), then for each cell: `wirelab link set`, `wirelab link
# check --json`, one markdown row. Needs root, iperf3 and jq. Tears the lab down on exit.
#   RATES="1mbit 10mbit" RTTS="1ms 40ms" DURATION=5s SHAPER=auto scripts/bench-link.sh
set -euo pipefail
WIRELAB=${WIRELAB:-./wirelab}
RATES=${RATES:-"1mbit 10mbit 50mbit 100mbit 1gbit"}
RTTS=${RTTS:-"1ms 10ms 40ms 100ms 250ms"}
DURATION=${DURATION:-5s}
SHAPER=${SHAPER:-auto}

out=$("$WIRELAB" up --no-db)
lab=$(printf '%s\n' "$out" | sed -n "s/.*wirelab down --lab \([^']*\)'.*/\1/p" | tail -1)
[ -n "$lab" ] || { echo "bench-link: could not read the lab id from 'wirelab up'" >&2; exit 1; }
trap '"$WIRELAB" down --lab "$lab" >/dev/null 2>&1 || true' EXIT INT TERM

echo "| rate | rtt | up | err | down | err | rtt median | err ms | rtt p99 | loss % | undelayed | verdict |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
for rate in $RATES; do
  for rtt in $RTTS; do
    "$WIRELAB" link set --lab "$lab" --rate "$rate" --rtt "$rtt" --shaper "$SHAPER" >/dev/null
    # link check exits 1 when the verdict fails; the JSON is still printed.
    j=$("$WIRELAB" link check --lab "$lab" --duration "$DURATION" --json 2>/dev/null || true)
    if [ -z "$j" ]; then echo "| $rate | $rtt | check failed | | | | | | | | | |"; continue; fi
    jq -r --arg rate "$rate" --arg rtt "$rtt" '
      def mbit: (. / 1e6 * 100 | round / 100 | tostring) + "M";
      def pct($a): if $a == 0 then "-" else ((. - $a) / $a * 1000 | round / 10 | tostring) + "%" end;
      .asked_rate_bps as $ar |
      "| \($rate) | \($rtt) | \(.up_bps|mbit) | \(.up_bps|pct($ar)) | \(.down_bps|mbit) | \(.down_bps|pct($ar)) | \(.rtt_median_ms*1000|round/1000) | \((.rtt_median_ms - .asked_rtt_ms)*1000|round/1000) | \(.rtt_p99_ms*1000|round/1000) | \(.loss_pct*100|round/100) | \(.undelayed_packets) | \(.verdict) |"' <<<"$j"
  done
done
