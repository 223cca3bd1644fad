#!/usr/bin/env bash
# bench-delay: what the lab's delay line costs the machine, and whether the RTT asked is the
# RTT seen. Writes docs/bench/delay.md (scripts/benchpage.sh) and prints it. Needs root, jq, ping and
# bin/wirelab (make build); each lab is private (WIRELAB_STATE_DIR under a temp dir).
#
# 1. CPU: `wirelab run --rtt 0` and `--rtt 2ms`, 32 threads of oltp_read_only, and a control
#    at --rtt 0 with one thread, alternating (ROUNDS rounds). Per run: TPS, the machine's CPU per transaction (everything,
#    the delay line included) and the delay line's CPU per packet, the part its verdict
#    writes took, and its share of the machine (results.json's lab_cost). Goals: machine CPU
#    per transaction at 2 ms within 1.3x of that at 0 ms; the delay line's own cost at most
#    5 µs a packet, judged on the range it lies in: at least all of its CPU but the verdict
#    writes (the delivery the sender would pay is inside them), at most all of it.
# 2. RTT: one lab (`wirelab up`), ping's average at --rtt 0 and 0.2ms, idle and under 16
#    sysbench threads; goal: 0.2ms within 0.1 ms of 0.2 ms + the same condition's --rtt 0
#    average. Then ping idle at 1, 10, 50, 250 ms; goal: within 0.05 ms + 1% of the asked
#    RTT plus the --rtt 0 average.
# 3. The database's round trip: one sysbench thread (oltp_point_select, one round trip per
#    transaction, and oltp_read_only) at --rtt 0, 1ms and 10ms in the same lab, twice each;
#    the round trip seen is (1/TPS − 1/TPS at 0) ÷ queries per transaction; goal: within
#    0.05 ms + 1% of the asked RTT.
# 0. Before all of it, this machine's cost of one timer wake-up (BenchmarkTimerWakeupCost in
#    internal/link): every release of the delay line and every delayed reply pays it, so it
#    says how far the CPU goal can be reached on this kind of machine.
#   ROUNDS=2 DURATION=20s WARMUP=5s LOAD_S=15 scripts/bench-delay.sh
# This script does not take the machine lock; by hand, run it alone on the machine.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/benchpage.sh
BENCH_CMD=$(bench_command ROUNDS DURATION WARMUP LOAD_S -- scripts/bench-delay.sh)
bench_page docs/bench/delay.md scripts/bench-delay.sh "bench-delay: the delay line's cost and fidelity"
WIRELAB=${WIRELAB:-bin/wirelab}
ROUNDS=${ROUNDS:-2}
DURATION=${DURATION:-20s}
WARMUP=${WARMUP:-5s}
LOAD_S=${LOAD_S:-15}
[[ -x $WIRELAB ]] || { echo "bench-delay: $WIRELAB missing: make build" >&2; exit 1; }
[[ $(id -u) == 0 ]] || { echo "bench-delay: the lab needs root" >&2; exit 1; }
for t in jq ping sysbench; do command -v $t >/dev/null || { echo "bench-delay: $t missing: make deps" >&2; exit 1; }; done

work=$(mktemp -d /tmp/bench-delay.XXXXXX)
export WIRELAB_STATE_DIR=$work/state
cleanup() { "$WIRELAB" down --all >/dev/null 2>&1 || true; }
trap cleanup EXIT
trap 'exit 130' INT TERM
load() { cut -d' ' -f1 /proc/loadavg; }
# delay_bench: every measurement below, then the page's tables.
delay_bench() {
# ---- 0. the machine's cost of a timer wake-up
echo "bench-delay: timer wake-up cost (load $(load))" >&2
wake=$(go test -run '^$' -bench TimerWakeupCost -benchtime 2x ./internal/link/ |
	awk '/^BenchmarkTimerWakeupCost/{for(i=1;i<=NF;i++){if($(i+1)=="µs/wakeup")c=$i; if($(i+1)=="wakeups/s")w=$i}} END{if(c!="")printf "%s %s", c, w}')
[[ -n $wake ]] || { echo "bench-delay: BenchmarkTimerWakeupCost printed no figure" >&2; exit 1; }
read -r wake_us wake_rate <<<"$wake"
wake_load=$(load)

# ---- 1. CPU, alternating runs
cpu_rows=()
declare -A cpu_sum=()
own_max=0 rest_max=0
for round in $(seq 1 "$ROUNDS"); do
	for cell in 0:32 2ms:32 0:1; do
		rtt=${cell%:*} th=${cell#*:}
		name=cpu-$round-$rtt-$th l=$(load)
		echo "bench-delay: round $round, --rtt $rtt, $th threads (load $l)" >&2
		if ! "$WIRELAB" run --rtt "$rtt" --threads "$th" --duration "$DURATION" --warmup "$WARMUP" \
			--out "$work/$name" >"$work/$name.log" 2>&1; then
			echo "bench-delay: run $name failed; see $work/$name.log" >&2
			tail -5 "$work/$name.log" >&2
			exit 1
		fi
		row=$(jq -r --arg r "$rtt" --arg l "$l" '.points[0] as $p |
			(($p.profile.cpu_machine_s + ($p.profile.lab_cpu_s // 0)) * 1e6) as $cpu |
			[$r, $p.threads, ($p.tps * 10 | round / 10), ($cpu | round), ($p.profile.round_trips * 10 | round / 10),
			 (if $p.lab_cost then ($p.lab_cost.delay_line_cpu_s / $p.lab_cost.delay_line_packets * 1e8 | round / 100) else "–" end),
			 (if $p.lab_cost then (($p.lab_cost.delay_line_cpu_s - ($p.lab_cost.delay_line_verdict_cpu_s // 0)) / $p.lab_cost.delay_line_packets * 1e8 | round / 100) else "–" end),
			 (if $p.lab_cost then ($p.lab_cost.machine_share * 1000 | round / 10) else "–" end),
			 $p.bottleneck, $l] | @tsv' "$work/$name/results.json")
		IFS=$'\t' read -r _ _ tps cpu _ own rest share _ _ <<<"$row"
		cpu_sum[$rtt-$th]=$(( ${cpu_sum[$rtt-$th]:-0} + cpu ))
		if [[ $own != – ]] && awk -v a="$own" -v b="$own_max" 'BEGIN{exit !(a > b)}'; then own_max=$own; fi
		if [[ $rest != – ]] && awk -v a="$rest" -v b="$rest_max" 'BEGIN{exit !(a > b)}'; then rest_max=$rest; fi
		cpu_rows+=("| $round | ${row//$'\t'/ | } |")
	done
done
ratio=$(awk -v a="${cpu_sum[2ms-32]}" -v b="${cpu_sum[0-32]}" 'BEGIN{printf "%.2f", a / b}')
ratio1=$(awk -v a="${cpu_sum[2ms-32]}" -v b="${cpu_sum[0-1]}" 'BEGIN{printf "%.2f", a / b}')

# ---- 2 and 3. RTT, in one lab. CPUs are kept awake throughout, as `wirelab run` keeps them
# (the delay line holds it only while it runs, so --rtt 0 would otherwise wake halted CPUs).
exec {awake}>/dev/cpu_dma_latency
printf '\0\0\0\0' >&"$awake"
echo "bench-delay: RTT (load $(load))" >&2
"$WIRELAB" up --rtt 0 >"$work/up.log" 2>&1
server=$("$WIRELAB" exec client -- sh -c 'echo $WIRELAB_SERVER_HOST')
SB='sysbench oltp_read_only --db-driver=mysql --mysql-host=$WIRELAB_SERVER_HOST --mysql-user=$WIRELAB_DB_USER --mysql-password=$WIRELAB_DB_PASSWORD --mysql-db=$WIRELAB_DB_NAME --tables=4 --table-size=100000 --rand-type=pareto'
"$WIRELAB" exec client -- sh -c "$SB prepare" >"$work/prepare.log" 2>&1

# ping_avg COUNT INTERVAL: ping's average RTT in ms from the client to the server
ping_avg() {
	"$WIRELAB" exec client -- ping -q -n -c "$1" -i "$2" "$server" | awk -F/ '/^rtt/ {print $5}'
}
# loaded THREADS SECONDS CMD...: CMD while sysbench runs THREADS threads for SECONDS (CMD
# starts once they have connected and must end within the rest)
loaded() {
	local th=$1 secs=$2; shift 2
	"$WIRELAB" exec client -- sh -c "$SB --threads=$th --time=$secs run" >"$work/load.log" 2>&1 &
	local sb=$!
	sleep 8
	"$@"
	wait "$sb"
}
ping_rows=()
for cond in idle load; do
	for rtt in 0 0.2ms 0 0.2ms; do
		"$WIRELAB" link set --rtt "$rtt" >/dev/null
		l=$(load)
		if [[ $cond == idle ]]; then avg=$(ping_avg 500 0.01); else avg=$(loaded 16 "$LOAD_S" ping_avg 500 0.01); fi
		ping_rows+=("$cond $rtt $avg $l")
	done
done
# Per condition: the mean of each RTT's two averages, and the error against 0.2 ms + base.
ping_table=$(printf '%s\n' "${ping_rows[@]}" | awk '
	{ k = $1 " " $2; s[k] += $3; n[k]++; ld[k] = ld[k] (ld[k] == "" ? "" : ", ") $4 }
	END {
		split("idle load", cs, " ")
		for (i = 1; i <= 2; i++) {
			c = cs[i]; b = s[c " 0"] / n[c " 0"]; d = s[c " 0.2ms"] / n[c " 0.2ms"]; err = d - (0.2 + b)
			printf "| %s | %.3f | %.3f | %+.3f | %s | %s |\n", c, b, d, err, (err <= 0.1 && err >= -0.1) ? "yes" : "**no**", ld[c " 0.2ms"]
		}
	}')
"$WIRELAB" link set --rtt 0 >/dev/null
base=$(ping_avg 500 0.01)
far_rows=()
for rtt in 1ms 10ms 50ms 250ms; do
	"$WIRELAB" link set --rtt "$rtt" >/dev/null
	ms=${rtt%ms} l=$(load)
	n=200 iv=0.02
	[[ $ms -ge 50 ]] && n=40 iv=0.2
	avg=$(ping_avg $n $iv)
	far_rows+=("$(awk -v a="$avg" -v b="$base" -v r="$ms" -v l="$l" 'BEGIN {
		err = a - b - r; allow = 0.05 + 0.01 * r
		printf "| %s ms | %.3f | %+.3f | ±%.3f | %s | %s |", r, a, err, allow, (err <= allow && err >= -allow) ? "yes" : "**no**", l }')")
done
# One sysbench thread's round trip: oltp_point_select is one query, one packet each way,
# so a transaction is one round trip; RTTs alternate so drift falls on every cell alike.
# WORKLOAD+CC runs WORKLOAD with the TCP congestion control CC on both hosts' routes
# (congctl) in place of the lab's own (cubic unless the kernel lacks it): BBR paces a reply
# of several segments. Each host's route is put back as the lab set it.
declare -A lab_route=()
for h in client server; do lab_route[$h]=$("$WIRELAB" exec "$h" -- ip route show default); done
congctl() { # CC ("" = the lab's own routes)
	local h gw
	for h in client server; do
		if [[ -z $1 ]]; then
			# shellcheck disable=SC2086 # the saved route is a list of words
			"$WIRELAB" exec "$h" -- ip route replace ${lab_route[$h]}
			continue
		fi
		gw=$(awk '{print $3}' <<<"${lab_route[$h]}")
		"$WIRELAB" exec "$h" -- ip route replace default via "$gw" dev eth0 congctl "$1"
	done
}
sb_tps() { # RTT WORKLOAD[+CC]: TPS and QPS of one thread over LOAD_S seconds
	local wl=${2%%+*} cc=
	[[ $2 == *+* ]] && cc=${2#*+}
	"$WIRELAB" link set --rtt "$1" >/dev/null
	[[ -z $cc ]] || congctl "$cc"
	"$WIRELAB" exec client -- sh -c "${SB/oltp_read_only/$wl} --threads=1 --time=$LOAD_S run" >"$work/sb1-$1-$2.log" 2>&1
	[[ -z $cc ]] || congctl ""
	awk '/transactions:/ { gsub(/\(/, "", $3); t = $3 } /queries:/ && !/performed/ { gsub(/\(/, "", $3); q = $3 } END { print t, q }' "$work/sb1-$1-$2.log"
}
lab_cc=$(grep -o 'congctl [a-z0-9_]*' <<<"${lab_route[client]}" | cut -d' ' -f2 || true)
lab_cc_text=${lab_cc:-"the kernel's default"}
workloads=(oltp_point_select oltp_read_only)
grep -qw bbr /proc/sys/net/ipv4/tcp_available_congestion_control && [[ $lab_cc != bbr ]] && workloads+=(oltp_read_only+bbr)
declare -A inv=() tpsl=() qps1=()
for round in 1 2; do
	for rtt in 0 1ms 10ms; do
		for wl in "${workloads[@]}"; do
			read -r t q <<<"$(sb_tps "$rtt" "$wl")"
			inv[$rtt-$wl]=$(awk -v a="${inv[$rtt-$wl]:-0}" -v t="$t" 'BEGIN{print a + 1 / t / 2}')
			tpsl[$rtt-$wl]="${tpsl[$rtt-$wl]:+${tpsl[$rtt-$wl]}, }$t"
			qps1[$rtt-$wl]=$(awk -v t="$t" -v q="$q" 'BEGIN{print q / t}')
		done
	done
done
rt_rows=()
for wl in "${workloads[@]}"; do
	for rtt in 1ms 10ms; do
		rt_rows+=("$(awk -v wl="$wl" -v i0="${inv[0-$wl]}" -v i="${inv[$rtt-$wl]}" -v rts="${qps1[$rtt-$wl]}" -v r="${rtt%ms}" \
			-v t0="${tpsl[0-$wl]}" -v t="${tpsl[$rtt-$wl]}" -v l="$(load)" 'BEGIN {
			seen = (i - i0) * 1000 / rts; err = seen - r; allow = 0.05 + 0.01 * r
			printf "| %s | %s ms | %s | %s | %.0f | %.3f | %+.3f | ±%.3f | %s | %s |", wl, r, t0, t, rts, seen, err, allow, (err <= allow && err >= -allow) ? "yes" : "**no**", l }')")
	done
done

cpu_goal="**missed**"
awk -v r="$ratio" 'BEGIN{exit !(r <= 1.3)}' && cpu_goal="met"
# The own cost lies between rest_max (all but the verdict writes) and own_max (all of it).
own_goal="not shown (the range straddles 5)"
awk -v o="$own_max" 'BEGIN{exit !(o <= 5)}' && own_goal="met"
awk -v o="$rest_max" 'BEGIN{exit !(o > 5)}' && own_goal="**missed**"
{
	echo "### What one timer wake-up costs this machine"
	echo
	echo "A thread spinning on CPU 0 loses **${wake_us} µs** of its CPU for each wake-up of a second thread on the same CPU"
	echo "sleeping 100 µs at a time (${wake_rate} wake-ups/s; \`go test -bench TimerWakeupCost ./internal/link/\`, load $wake_load):"
	echo "a timer interrupt and two context switches. The delay line pays it once per release and a"
	echo "delayed reply once more when it wakes its reader, and both count in the machine's CPU per transaction below; a"
	echo "kernel delay (netem) would pay the interrupts too (docs/delay-line.md)."
	echo
	echo "### The machine's CPU per transaction, --rtt 0 vs --rtt 2ms"
	echo
	echo "\`wirelab run --rtt R --threads 32 --duration $DURATION --warmup $WARMUP\` (oltp_read_only), alternating."
	echo "\"machine µs/txn\" is all of the machine's CPU (the delay line's included) per transaction; \"all µs/pkt\" is"
	echo "all of the delay line's CPU per packet, \"less verdicts\" the same without its verdict writes (the system call in"
	echo "which the kernel also delivers the packets into the receiving host's stack, work the sender does itself without a"
	echo "delay line); \"share\" is all of its CPU's share of the machine, the figure a point is flagged \`lab\` on."
	echo
	echo "| round | rtt | threads | TPS | machine µs/txn | queries/txn | all µs/pkt | less verdicts µs/pkt | share % | bottleneck | load |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|"
	printf '%s\n' "${cpu_rows[@]}"
	echo
	echo "Machine CPU per transaction, 2 ms ÷ 0 ms at 32 threads (sums over the rounds): **${ratio}×** (goal ≤ 1.3×: $cpu_goal)."
	echo "The same at 2 ms ÷ one thread at --rtt 0, where each query also sleeps and wakes both processes but no delay line runs:"
	echo "**${ratio1}×**."
	echo "The delay line's own cost, worst run: **between ${rest_max} and ${own_max} µs a packet** (goal ≤ 5: $own_goal)."
	echo
	echo "### ping at 0.2 ms, idle and under 16 sysbench threads"
	echo
	echo "Averages of two 500-ping runs each (\`ping -i 0.01\`), same lab; the error is the 0.2 ms average less 0.2 ms and the"
	echo "same condition's --rtt 0 average (goal: within ±0.1 ms)."
	echo
	echo "| condition | rtt 0 avg ms | rtt 0.2ms avg ms | error ms | within | load |"
	echo "|---|---|---|---|---|---|"
	echo "$ping_table"
	echo
	echo "### ping, idle, 1 to 250 ms"
	echo
	echo "Error: the average less the asked RTT and the --rtt 0 average ($base ms); allowed ±(0.05 ms + 1%)."
	echo
	echo "| asked | avg ms | error ms | allowed | within | load |"
	echo "|---|---|---|---|---|---|"
	printf '%s\n' "${far_rows[@]}"
	echo
	echo "### The database's own round trip, one sysbench thread"
	echo
	echo "$LOAD_S s at one thread, twice per RTT, alternating; seen = (mean 1/TPS − mean 1/TPS at --rtt 0) ÷ queries per"
	echo "transaction. oltp_point_select is one query and one packet each way: its round trip is the wire's. oltp_read_only's"
	echo "16 queries include four range scans whose replies take several segments. The lab's hosts use $lab_cc_text"
	echo "(\`wirelab up\` without \`--tcp-congestion\`; this kernel's own default is $(cat /proc/sys/net/ipv4/tcp_congestion_control)). The \`+bbr\` rows"
	echo "run the same with bbr on both hosts' routes: BBR, without the fq qdisc, paces its own sends at a rate derived from"
	echo "its bandwidth estimate, which a request/reply flow keeps low, so a reply of several segments leaves in bursts spread"
	echo "over time: TCP's doing, not the delay line's, and netem would see it too."
	echo
	echo "| workload | asked | TPS at 0 | TPS | queries/txn | seen ms | error ms | allowed | within | load |"
	echo "|---|---|---|---|---|---|---|---|---|---|"
	printf '%s\n' "${rt_rows[@]}"
}
}
bench_section 1 "Cost and fidelity, --rtt 0 vs 2ms and 0.2 to 250 ms" delay_bench
echo "(results and logs: $work)" >&2
