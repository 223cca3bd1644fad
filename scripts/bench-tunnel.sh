#!/usr/bin/env bash
# Benchmarks of internal/tunnel, printed as markdown tables and written to docs/bench/tunnel.md
# (scripts/benchpage.sh): one section per part, each run replacing the parts it ran.
#   1. loopback throughput (no shaping): direct, two socat hops, tunnel entry+exit off/zstd/auto
#   2. ratio and CPU per MB on MySQL-like traffic: MySQL zlib compression, DTLE, tunnel zstd
#   3. in the lab (root; real MariaDB + sysbench oltp_read_only, 32 threads): at 20 mbit the
#      tunnel with default flags (the mux link, --level auto) against --mysql-compression, two
#      rounds alternating (goal over-compression), then the per-connection layout; unshaped
#      the tunnel against plain
#   4. framing encode/decode throughput and allocations, 5. request round-trip latency
#   6. relays in one lab (root): unshaped oltp_read_only at 2 and 32 threads, direct, two socat
#      hops (fork,nodelay), tunnel --mux off and --mux on (and on without TLS), the same lab and
#      data for all rows (goal over-socat: socat against tunnel mux on, round by round)
#   7. replication --quick (root): native vs tunnel, max sustainable load and wire bytes
#      (goals replication-load, -wire, -p99-lag: the study judges them into its goals.json)
#   8. loopback relay cost per query (BenchmarkRelay): direct, socat, tunnel, mux, in-process
#      and as `wirelab tunnel` processes
#   9. the metrics endpoint's cost (root): in one lab at 20 mbit, oltp_read_only at 32 threads
#      through one tunnel whose ends serve --metrics-listen, scraped every second or not,
#      alternating; the ends' CPU per transaction each way and the ratio with its interval
# Parts 1, 2, 4, 5, 8 are loopback only and need no root; parts 3, 6, 7, 9 build private labs
# (WIRELAB_STATE_DIR under a temp dir unless set) and need bin/wirelab (make build).
# The goals: parts 3 and 6 hand their goal rows (TPS and per-second TPS, round by round)
# and part 7 its goals.json to `wirelab tunnel goals --judge`, which judges each goal on its
# 95% interval, merges the verdicts into docs/bench/tunnel-goals.json (a goal this run did
# not measure keeps its last verdict) and prints the goals section, ending the page;
# docs/tunnel.md and README.md quote its tables. REPLICATION_GOALS=results/<run>/goals.json
# takes the replication goals from a study run already made instead of part 7.
# Each lab row records /proc/loadavg before and after: the lab shares the machine's cores.
# Usage: scripts/bench-tunnel.sh [benchtime]   (default 2s; the ratio runs use 3x)
#   PARTS="1 2 3 4 5 6 7 8 9"   which parts to run;  LAB_DURATION=60s LAB_WARMUP=20s LAB_THREADS=32
#   (the warm-up covers --level auto's climb on a mux link, 2-5 s, and the shared history
#   filling: at 20 mbit the ratio per 10 s is steady from the second 10 s on)
#   LAB_ROWS="20mbit compression,20mbit tunnel,20mbit compression 2,20mbit tunnel 2" runs
#   only those rows of part 3 (the goal's pair, twice)
#   RELAY_DURATION=20s RELAY_WARMUP=5s RELAY_ROUNDS=2 RELAY_THREADS="2 32" (part 6; e.g.
#   PARTS=6 RELAY_ROWS="socat,tunnel mux on" runs only those rows of it; over-socat has an
#   interval from 3 rounds on, RELAY_ROUNDS=8 narrows it)
#   METRICS_DURATION=60s METRICS_WARMUP=10s METRICS_ROUNDS=6 METRICS_THREADS=32 (part 9)
#   REPLICATION_GOALS=FILE   a replication study's goals.json for the goals table
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/benchpage.sh
BENCH_CMD=$(bench_command PARTS LAB_DURATION LAB_WARMUP LAB_THREADS LAB_ROWS RELAY_DURATION RELAY_WARMUP \
	RELAY_ROUNDS RELAY_THREADS RELAY_ROWS METRICS_DURATION METRICS_WARMUP METRICS_ROUNDS METRICS_THREADS \
	REPLICATION_GOALS -- scripts/bench-tunnel.sh "$@")
bench_page docs/bench/tunnel.md scripts/bench-tunnel.sh "bench-tunnel: the tunnel's throughput, ratio and relay cost"
export GOFLAGS=-mod=mod
bt=${1:-2s}
parts=" ${PARTS:-1 2 3 4 5 6 7 8 9} "
want() { [[ $parts == *" $1 "* ]]; }
# The goals: the rows parts 3 and 6 measured toward them, and the goals files to merge.
GOALS_FILE=docs/bench/tunnel-goals.json
bench_start=$(bench_now)
goal_rows=$(mktemp /tmp/bench-tunnel-goals.XXXXXX)
goal_files=$(mktemp /tmp/bench-tunnel-goal-files.XXXXXX)
trap 'rm -f "$goal_rows" "$goal_files"' EXIT
echo -e "goal\tcase\tside\trow\tround\ttps\tseconds" >"$goal_rows"
if [[ -n ${REPLICATION_GOALS:-} ]]; then
	[[ -f $REPLICATION_GOALS ]] || { echo "REPLICATION_GOALS=$REPLICATION_GOALS: no such file (want a replication study's goals.json)" >&2; exit 2; }
	echo "$REPLICATION_GOALS" >>"$goal_files"
fi

# goal_row GOAL CASE SIDE ROW ROUND TPS SECONDS: one row measured toward GOAL, for
# `wirelab tunnel goals --judge` (SECONDS: per-second TPS after the warm-up, comma-separated,
# or -; TPS 0: the row failed).
goal_row() { printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >>"$goal_rows"; }
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
	if ! bin/wirelab run --threads "${LAB_THREADS:-32}" --duration "${LAB_DURATION:-60s}" --warmup "${LAB_WARMUP:-20s}" \
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

# lab_goal_row NAME SIDE ROUND TPS: lab_row NAME (its TPS as lab_row printed it, 0 when it
# failed) with its per-second TPS after the warm-up, as a row of over-compression.
lab_goal_row() {
	local res="$labdir/$1/results.json" secs=-
	if [[ $4 != 0 && -f $res ]]; then
		secs=$(jq -r '[.points[0].seconds[]? | select(.warmup | not) | .tps | tostring] | if length > 0 then join(",") else "-" end' "$res")
	fi
	goal_row over-compression "20 Mbit, ${LAB_THREADS:-32} threads, ${LAB_DURATION:-60s} points" "$2" "$1" "$3" "$4" "$secs"
}

# need_lab PART: root and bin/wirelab, or say why the part is skipped (its section of the
# page is then left as it was).
need_lab() {
	if [[ $(id -u) != 0 ]]; then echo "(part $1 needs root: skipped)"; return 1; fi
	[[ -x bin/wirelab ]] || { echo "bin/wirelab missing: make build" >&2; return 1; }
}

lab() {
	labdir=$(mktemp -d /tmp/bench-tunnel.XXXXXX)
	export WIRELAB_STATE_DIR=${WIRELAB_STATE_DIR:-$labdir/state}
	local rows=() r name
	# over-compression's rows: side and round
	local -A goal_side=(["20mbit compression"]="base 1" ["20mbit tunnel"]="tunnel 1"
		["20mbit compression 2"]="base 2" ["20mbit tunnel 2"]="tunnel 2")
	# The goal's pair (compression vs the tunnel's defaults) runs twice, alternating, first.
	# Each goal row is followed by the tunnel with its relay threads left to the kernel.
	for r in "20mbit compression|--rate 20mbit --compression" "20mbit tunnel|--rate 20mbit --channel tunnel" \
		"20mbit tunnel link CPUs free|--rate 20mbit --channel tunnel --tunnel-link-cpus free" \
		"20mbit compression 2|--rate 20mbit --compression" "20mbit tunnel 2|--rate 20mbit --channel tunnel" \
		"20mbit tunnel link CPUs free 2|--rate 20mbit --channel tunnel --tunnel-link-cpus free" \
		"20mbit plain|--rate 20mbit" \
		"20mbit tunnel mux off|--rate 20mbit --channel tunnel --tunnel-mux off" \
		"20mbit tunnel mux off zstd|--rate 20mbit --channel tunnel --tunnel-mux off --tunnel-compress zstd" \
		"unlimited plain|--rate unlimited" "unlimited compression|--rate unlimited --compression" \
		"unlimited tunnel|--rate unlimited --channel tunnel" \
		"unlimited tunnel mux off|--rate unlimited --channel tunnel --tunnel-mux off"; do
		name=${r%%|*}
		[[ -z ${LAB_ROWS:-} || ",$LAB_ROWS," == *",$name,"* ]] || continue
		# shellcheck disable=SC2086 # the flags are meant to split
		rows+=("$(lab_row "$name" ${r#*|})")
		if [[ -n ${goal_side[$name]:-} ]]; then
			# shellcheck disable=SC2086 # side and round
			lab_goal_row "$name" ${goal_side[$name]} "$(cut -d'|' -f2 <<<"${rows[-1]}")"
		fi
	done
	echo "| case | TPS | lat avg ms | cpu server | cpu client | link util | bottleneck | loadavg before → after |"
	echo "|---|---:|---:|---:|---:|---:|---|---|"
	printf '%s\n' "${rows[@]}" | awk -F'|' '{ printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7, $8 }'
	echo
	printf '%s\n' "${rows[@]}" | awk -F'|' '{ tps[$1] = $2 }
	function ratio(a, b, goal) { if (!(a in tps) || !(b in tps)) return # a row LAB_ROWS left out
		if (tps[b] > 0) printf "| %s / %s | %.2fx | %s |\n", a, b, tps[a] / tps[b], goal; else printf "| %s / %s | - | %s |\n", a, b, goal }
	END { print "| ratio | value | note |"; print "|---|---:|---|"
	      ratio("20mbit tunnel link CPUs free", "20mbit compression", "(reference: relay threads not held on a CPU)")
	      ratio("20mbit tunnel link CPUs free 2", "20mbit compression 2", "(reference)")
	      ratio("20mbit tunnel mux off", "20mbit compression", "(reference: one WAN connection per client)")
	      ratio("20mbit tunnel mux off zstd", "20mbit compression", "(reference)")
	      ratio("20mbit compression", "20mbit plain", "(reference)")
	      ratio("unlimited tunnel", "unlimited plain", "(reference; part 6 compares relays)")
	      ratio("unlimited tunnel mux off", "unlimited plain", "(reference)")
	      ratio("unlimited compression", "unlimited plain", "(reference)") }'
	echo
	echo "(tunnel ÷ compression, the goal over-compression, is judged in the goals section)"
	echo
	echo "(results.json and logs: $labdir; each tunnel row's directory keeps its ends' tunnel-exit.log and tunnel-entry.log: level decisions, --stats lines)" >&2
}

# relays: one unshaped lab, one data set; sysbench in the client host reaches MariaDB directly,
# through two socat hops, and through tunnel entries with --mux off and on (both to one exit,
# which serves either layout). CPUs are held awake as `wirelab run` does. The rows of a thread
# count alternate, RELAY_ROUNDS times; relay CPU per transaction is the relay processes'
# utime+stime (socat: its forked children's too, once reaped) over the row's transactions.
# The row "tunnel mux on (goroutines)" runs the mux link without its relay loop
# (WIRELAB_TUNNEL_LOOP=off, its own exit), "tunnel mux on (crypto/tls records)" with the
# link's bytes sealed by crypto/tls instead of the link's own record layer
# (WIRELAB_TUNNEL_RECORDS=tls, the same exit), and "tunnel mux on (no TLS)" without encryption
# (its own exit and entry, no --tls-* flags), for comparison: socat's hops are plaintext;
# "tunnel mux on (link CPUs free)" with --link-cpus free at both ends (its own exit): the
# kernel places and moves the relay threads.
# The lab runs client, relays and server on this machine's CPUs, so at 2 threads the TPS is
# what those CPUs hold: each row also gives MariaDB's CPU per transaction and the share of
# the row's CPU time the machine was idle (/proc/stat), which tell a relay that costs more
# CPU from one whose hops leave the CPUs waiting.
relays() {
	local dir; dir=$(mktemp -d /tmp/bench-relays.XXXXXX)
	local wl="$PWD/bin/wirelab"
	(
	export WIRELAB_STATE_DIR=${WIRELAB_STATE_DIR:-$dir/state}
	trap '"$wl" down >"$dir/down.log" 2>&1 || true' EXIT
	"$wl" up --rate unlimited >"$dir/up.log" 2>&1 || { echo "wirelab up failed; see $dir/up.log" >&2; exit 1; }
	exec 3>/dev/cpu_dma_latency && printf '\0\0\0\0' >&3 || true
	local sb='sysbench oltp_read_only --mysql-user=$WIRELAB_DB_USER --mysql-password=$WIRELAB_DB_PASSWORD --mysql-db=$WIRELAB_DB_NAME --tables=4 --table-size=100000 --rand-type=pareto'
	"$wl" exec client -- sh -c "$sb --mysql-host=\$WIRELAB_SERVER_HOST --threads=4 prepare" >"$dir/prepare.log" 2>&1 ||
		{ echo "sysbench prepare failed; see $dir/prepare.log" >&2; exit 1; }
	"$wl" tunnel certs --out "$dir/certs" --hosts 198.18.0.2 >/dev/null
	local c="$dir/certs" tls
	tls=(--tls-cert "$c/exit.pem" --tls-key "$c/exit-key.pem" --tls-ca "$c/ca.pem")
	"$wl" exec server -- socat TCP-LISTEN:4407,bind=198.18.0.2,reuseaddr,fork,nodelay,backlog=128 TCP:127.0.0.1:3306,nodelay >"$dir/socat-server.log" 2>&1 &
	"$wl" exec client -- socat TCP-LISTEN:3308,bind=127.0.0.1,reuseaddr,fork,nodelay,backlog=128 TCP:198.18.0.2:4407,nodelay >"$dir/socat-client.log" 2>&1 &
	"$wl" exec server -- "$wl" tunnel exit --listen 198.18.0.2:4406 --to 127.0.0.1:3306 --stats --stats-every 10s "${tls[@]}" >"$dir/tunnel-exit.log" 2>&1 &
	"$wl" exec server -- env WIRELAB_TUNNEL_LOOP=off "$wl" tunnel exit --listen 198.18.0.2:4405 --to 127.0.0.1:3306 --stats --stats-every 10s "${tls[@]}" >"$dir/tunnel-exit-goroutines.log" 2>&1 &
	tls=(--tls-cert "$c/entry.pem" --tls-key "$c/entry-key.pem" --tls-ca "$c/ca.pem")
	local mux port
	for mux in off on; do
		port=$([[ $mux == off ]] && echo 3307 || echo 3309)
		"$wl" exec client -- "$wl" tunnel entry --listen "127.0.0.1:$port" --to 198.18.0.2:4406 --mux "$mux" --stats --stats-every 10s \
			"${tls[@]}" >"$dir/tunnel-entry-mux-$mux.log" 2>&1 &
	done
	"$wl" exec client -- env WIRELAB_TUNNEL_LOOP=off "$wl" tunnel entry --listen 127.0.0.1:3310 --to 198.18.0.2:4405 --mux on --stats --stats-every 10s \
		"${tls[@]}" >"$dir/tunnel-entry-goroutines.log" 2>&1 &
	# the same exit, the link's bytes in crypto/tls's records instead of its own
	"$wl" exec client -- env WIRELAB_TUNNEL_RECORDS=tls "$wl" tunnel entry --listen 127.0.0.1:3311 --to 198.18.0.2:4406 --mux on --stats --stats-every 10s \
		"${tls[@]}" >"$dir/tunnel-entry-tls-records.log" 2>&1 &
	# the same mux link without TLS: what the relay costs apart from encryption
	"$wl" exec server -- "$wl" tunnel exit --listen 198.18.0.2:4403 --to 127.0.0.1:3306 --stats --stats-every 10s >"$dir/tunnel-exit-plaintext.log" 2>&1 &
	"$wl" exec client -- "$wl" tunnel entry --listen 127.0.0.1:3312 --to 198.18.0.2:4403 --mux on --stats --stats-every 10s >"$dir/tunnel-entry-plaintext.log" 2>&1 &
	# the same mux link with its relay threads where the kernel puts them (its own exit)
	"$wl" exec server -- "$wl" tunnel exit --listen 198.18.0.2:4402 --to 127.0.0.1:3306 --link-cpus free --stats --stats-every 10s \
		--tls-cert "$c/exit.pem" --tls-key "$c/exit-key.pem" --tls-ca "$c/ca.pem" >"$dir/tunnel-exit-cpus-free.log" 2>&1 &
	"$wl" exec client -- "$wl" tunnel entry --listen 127.0.0.1:3313 --to 198.18.0.2:4402 --mux on --link-cpus free --stats --stats-every 10s \
		"${tls[@]}" >"$dir/tunnel-entry-cpus-free.log" 2>&1 &
	sleep 2
	# relay processes per row, found by their listening address
	local -A procs=(["direct"]="" ["socat"]="TCP-LISTEN:4407;TCP-LISTEN:3308"
		["tunnel mux off"]="listen 198.18.0.2:4406;listen 127.0.0.1:3307" ["tunnel mux on"]="listen 198.18.0.2:4406;listen 127.0.0.1:3309"
		["tunnel mux on (goroutines)"]="listen 198.18.0.2:4405;listen 127.0.0.1:3310"
		["tunnel mux on (crypto/tls records)"]="listen 198.18.0.2:4406;listen 127.0.0.1:3311"
		["tunnel mux on (no TLS)"]="listen 198.18.0.2:4403;listen 127.0.0.1:3312"
		["tunnel mux on (link CPUs free)"]="listen 198.18.0.2:4402;listen 127.0.0.1:3313")
	local -A addrs=(["direct"]="198.18.0.2:3306" ["socat"]="127.0.0.1:3308" ["tunnel mux off"]="127.0.0.1:3307"
		["tunnel mux on"]="127.0.0.1:3309" ["tunnel mux on (goroutines)"]="127.0.0.1:3310"
		["tunnel mux on (crypto/tls records)"]="127.0.0.1:3311" ["tunnel mux on (no TLS)"]="127.0.0.1:3312"
		["tunnel mux on (link CPUs free)"]="127.0.0.1:3313")
	local rows=() r
	IFS=',' read -ra rows <<<"${RELAY_ROWS:-direct,socat,tunnel mux off,tunnel mux on,tunnel mux on (goroutines),tunnel mux on (crypto/tls records),tunnel mux on (no TLS),tunnel mux on (link CPUs free)}"
	for r in "${!rows[@]}"; do rows[r]=${rows[r]# }; done
	# relay_cpu NAME: clock ticks of the row's relay processes (and their reaped children)
	relay_cpu() {
		local pat pats pid total=0
		IFS=';' read -ra pats <<<"${procs[$1]}"
		for pat in "${pats[@]}"; do
			for pid in $(pgrep -f -- "$pat" || true); do
				case $(cat "/proc/$pid/comm" 2>/dev/null) in socat | wirelab) ;; *) continue ;; esac
				total=$((total + $(awk '{ sub(/.*\) /, ""); print $12 + $13 + $14 + $15 }' "/proc/$pid/stat" 2>/dev/null || echo 0)))
			done
		done
		echo "$total"
	}
	# server_cpu: clock ticks of the lab's mariadbd (the one in the server's network
	# namespace, not another on this machine), nothing when it is not found; box_ticks:
	# "idle total" ticks of all CPUs
	local server_ns
	server_ns=$("$wl" exec server -- readlink /proc/self/ns/net)
	server_cpu() {
		local pid
		for pid in $(pgrep -x mariadbd || true); do
			[[ $(readlink "/proc/$pid/ns/net" 2>/dev/null) == "$server_ns" ]] || continue
			awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$pid/stat" 2>/dev/null && return
		done
	}
	box_ticks() { awk '/^cpu / { t = 0; for (i = 2; i <= NF; i++) t += $i; print $5 + $6, t; exit }' /proc/stat; }
	echo "| threads | round | case | TPS | lat p95 ms | relay CPU ms / txn | MariaDB CPU ms / txn | idle % | loadavg before → after |"
	echo "|---:|---:|---|---:|---:|---:|---:|---:|---|"
	local threads round name addr before after out tps lat secs cpu0 cpu1 txns cpt hz srv0 srv1 spt idle0 tot0 idle1 tot1 idle
	hz=$(getconf CLK_TCK)
	local -A per # a row's TPS, round by round
	for threads in ${RELAY_THREADS:-2 32}; do
		for ((round = 1; round <= ${RELAY_ROUNDS:-2}; round++)); do
			for name in "${rows[@]}"; do
				addr=${addrs[$name]:?unknown relay row \"$name\" in RELAY_ROWS}
				before=$(cut -d' ' -f1-3 /proc/loadavg)
				out="$dir/$threads-$round-${name//[^a-zA-Z0-9]/-}.log"
				cpu0=$(relay_cpu "$name")
				srv0=$(server_cpu)
				read -r idle0 tot0 < <(box_ticks)
				"$wl" exec client -- sh -c "$sb --mysql-host=${addr%:*} --mysql-port=${addr#*:} --threads=$threads --time=$((${RELAY_DURATION%s} + ${RELAY_WARMUP%s})) --report-interval=1 run" >"$out" 2>&1 || true
				read -r idle1 tot1 < <(box_ticks)
				srv1=$(server_cpu)
				sleep 1 # socat's children exit and are reaped
				cpu1=$(relay_cpu "$name")
				after=$(cut -d' ' -f1-3 /proc/loadavg)
				# Per-second lines after the warm-up: "[ 7s ] thds: 2 tps: 812.00 qps: ... lat (ms,95%): 3.1 ...":
				# the mean TPS, the mean 95th percentile and the seconds' TPS, comma-separated.
				tps= lat= secs=
				read -r tps lat secs < <(awk -v warm="${RELAY_WARMUP%s}" '/^\[ *[0-9]+s \]/ { t = $2; sub(/s/, "", t)
					if (t + 0 > warm) { for (i = 1; i < NF; i++) { if ($i == "tps:") { s += $(i+1); each = each (n ? "," : "") $(i+1) }
						if ($i == "(ms,95%):") l += $(i+1) } n++ } }
					END { if (n) printf "%.1f %.2f %s\n", s / n, l / n, each }' "$out")
				txns=$(awk '/transactions:/ { print $2; exit }' "$out")
				cpt=- spt=-
				if [[ ${txns:-0} -gt 0 ]]; then
					if [[ -n ${procs[$name]} ]]; then
						cpt=$(awk -v d=$((cpu1 - cpu0)) -v hz="$hz" -v t="$txns" 'BEGIN { printf "%.3f", d * 1000 / hz / t }')
					fi
					if [[ -n $srv0 && -n $srv1 ]]; then
						spt=$(awk -v d=$((srv1 - srv0)) -v hz="$hz" -v t="$txns" 'BEGIN { printf "%.3f", d * 1000 / hz / t }')
					fi
				fi
				# over the whole row, connect and warm-up included
				idle=$(awk -v i=$((idle1 - idle0)) -v t=$((tot1 - tot0)) 'BEGIN { if (t > 0) printf "%.1f", 100 * i / t; else print "-" }')
				per[$threads/$name]+="${tps:-0} "
				case $name in
				socat) goal_row over-socat "$threads threads" base "$name" "$round" "${tps:-0}" "${secs:--}" ;;
				"tunnel mux on") goal_row over-socat "$threads threads" tunnel "$name" "$round" "${tps:-0}" "${secs:--}" ;;
				esac
				echo "| $threads | $round | $name | ${tps:-failed} | ${lat:--} | $cpt | $spt | $idle | $before → $after |"
			done
		done
	done
	echo
	# Each cell: the ratio of the rows' mean TPS, then the lowest and highest ratio of one
	# round's TPS to the other row's in the same round (rows alternate within a round): on two
	# CPUs shared by client, server and relays one row's rounds can differ by a third, and the
	# range says how far one ratio can be trusted.
	echo "| ratio (mean TPS of the rounds; per-round range) | $(for threads in ${RELAY_THREADS:-2 32}; do printf '%s threads | ' "$threads"; done)note |"
	echo "|---|$(for threads in ${RELAY_THREADS:-2 32}; do printf -- '---:|'; done)---|"
	local a b goal t1=${RELAY_THREADS:-2 32}
	t1=${t1%% *}
	for r in "tunnel mux off|socat|(reference: one WAN connection per client)" "tunnel mux on (goroutines)|socat|(reference: no relay loop)" \
		"tunnel mux on (crypto/tls records)|socat|(reference: crypto/tls seals every record)" \
		"tunnel mux on (no TLS)|socat|(reference: no encryption, as socat)" \
		"tunnel mux on (link CPUs free)|socat|(reference: relay threads not held on a CPU)" \
		"socat|direct|(reference)" "tunnel mux on|direct|(reference)"; do
		IFS='|' read -r a b goal <<<"$r"
		[[ -n ${per[$t1/$a]:-} && -n ${per[$t1/$b]:-} ]] || continue
		printf '| %s / %s |' "$a" "$b"
		for threads in ${RELAY_THREADS:-2 32}; do
			printf ' %s |' "$(awk -v pa="${per[$threads/$a]:-}" -v pb="${per[$threads/$b]:-}" \
				'BEGIN { na = split(pa, ra, " "); nb = split(pb, rb, " ")
					for (i = 1; i <= na; i++) x += ra[i]
					for (i = 1; i <= nb; i++) y += rb[i]
					if (!(na > 0 && nb > 0 && y > 0)) { print "-"; exit }
					printf "%.2fx", (x / na) / (y / nb)
					k = na < nb ? na : nb
					lo = hi = ""
					for (i = 1; i <= k; i++) if (rb[i] > 0) { q = ra[i] / rb[i]; if (lo == "" || q < lo) lo = q; if (hi == "" || q > hi) hi = q }
					if (k > 1 && lo != "") printf " (%.2f-%.2f)", lo, hi }')"
		done
		echo " $goal |"
	done
	echo
	echo "(tunnel mux on ÷ socat, the goal over-socat, is judged in the goals section)"
	echo
	echo "(sysbench output and tunnel --stats: $dir)" >&2
	)
}

# replication: the study's quick matrix, native vs tunnel (its default layout), in its own lab.
replication() {
	local dir; dir=$(mktemp -d /tmp/bench-replication.XXXXXX)
	if ! WIRELAB_STATE_DIR=${WIRELAB_STATE_DIR:-$dir/state} bin/wirelab study replication --quick --channels native,tunnel \
		--out "$dir/out" >"$dir/study.log" 2>&1; then
		echo "replication study failed; see $dir/study.log" >&2
		tail -5 "$dir/study.log" >&2
		return 1
	fi
	# The report's own tables: the max sustainable load and the bytes on the wire per channel.
	awk '/^#+ .*(Max sustainable load|[Bb]andwidth|[Ww]ire bytes)/ { on = 1 } on && /^#+ / && !/(Max sustainable load|[Bb]andwidth|[Ww]ire bytes)/ { on = 0 } on' "$dir/out/report.md"
	echo
	# The study judged its goals (goals.json): the goals section merges them.
	if [[ -f $dir/out/goals.json ]]; then
		echo "$dir/out/goals.json" >>"$goal_files"
		echo "(the goals replication-load, -wire and -p99-lag are judged in the goals section)"
	fi
	echo "(results.json and report: $dir/out)" >&2
}

# metrics_cost: what a scraped metrics endpoint costs the tunnel's ends. One lab at 20 mbit,
# one data set, one exit and one entry started as a lab starts them (the default knobs,
# mutual TLS, --stats every 10 s, --drain-timeout 0s), each also serving --metrics-listen on
# its own host's loopback. Rows alternate METRICS_ROUNDS times between "scraped", with a
# loop in each end's host fetching /metrics every second as Prometheus does (its Accept
# header, gzip), and "not scraped", the same processes with no scraper: the same ends,
# mux links and zstd history in both rows, so what differs is the scrapes (an endpoint
# nobody scrapes is a listener waiting in accept). The order swaps every round (A B, B A,
# ...), so a drift over the part (the zstd level settling, the buffer pool warming) falls
# on both rows alike, and an unmeasured run first warms the lab. CPU per transaction is
# each end's utime+stime over the row's transactions (sysbench's summary), warm-up
# included in both; the ratio is the geometric mean of the rounds' scraped ÷ not-scraped
# ratios with its 95% interval (scripts/paired-ratio.awk).
metrics_cost() {
	local dir; dir=$(mktemp -d /tmp/bench-metrics.XXXXXX)
	local wl="$PWD/bin/wirelab"
	(
	export WIRELAB_STATE_DIR=${WIRELAB_STATE_DIR:-$dir/state}
	trap 'touch "$dir/stop"; "$wl" down >"$dir/down.log" 2>&1 || true' EXIT
	"$wl" up --rate 20mbit >"$dir/up.log" 2>&1 || { echo "wirelab up --rate 20mbit failed; see $dir/up.log" >&2; exit 1; }
	exec 3>/dev/cpu_dma_latency && printf '\0\0\0\0' >&3 || true
	local sb='sysbench oltp_read_only --mysql-user=$WIRELAB_DB_USER --mysql-password=$WIRELAB_DB_PASSWORD --mysql-db=$WIRELAB_DB_NAME --tables=4 --table-size=100000 --rand-type=pareto'
	"$wl" exec server -- sh -c "$sb --mysql-host=127.0.0.1 --threads=4 prepare" >"$dir/prepare.log" 2>&1 ||
		{ echo "sysbench prepare failed; see $dir/prepare.log" >&2; exit 1; }
	"$wl" tunnel certs --out "$dir/certs" --hosts 198.18.0.2 >/dev/null
	local end c="$dir/certs"
	local -A host=([entry]=client [exit]=server) maddr=([entry]=127.0.0.1:9465 [exit]=127.0.0.1:9464) pid=()
	local -A argv=([exit]="exit --listen 198.18.0.2:4406 --to 127.0.0.1:3306" [entry]="entry --listen 127.0.0.1:3307 --to 198.18.0.2:4406")
	for end in exit entry; do
		# shellcheck disable=SC2086 # the end's flags are meant to split
		"$wl" exec "${host[$end]}" -- "$wl" tunnel ${argv[$end]} --stats --stats-every 10s --drain-timeout 0s \
			--tls-cert "$c/$end.pem" --tls-key "$c/$end-key.pem" --tls-ca "$c/ca.pem" \
			--metrics-listen "${maddr[$end]}" >"$dir/tunnel-$end.log" 2>&1 &
	done
	sleep 2
	for end in entry exit; do
		# the end itself, not the `wirelab exec` that started it
		pid[$end]=$(pgrep -f "^$wl tunnel $end --listen" | head -1 || true)
		[[ -n ${pid[$end]} ]] || { echo "tunnel $end did not start; see $dir/tunnel-$end.log" >&2; exit 1; }
		if ! "$wl" exec "${host[$end]}" -- curl -sf -o "$dir/metrics-$end.txt" "http://${maddr[$end]}/metrics" ||
			! grep -q '^wirelab_tunnel_wire_bytes_total' "$dir/metrics-$end.txt"; then
			echo "tunnel $end serves no metrics at ${maddr[$end]}; see $dir/tunnel-$end.log" >&2
			exit 1
		fi
	done
	local threads=${METRICS_THREADS:-32} dur=${METRICS_DURATION:-60s} warm=${METRICS_WARMUP:-10s} hz
	dur=${dur%s} warm=${warm%s} hz=$(getconf CLK_TCK)
	local accept='application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1'
	# scrape END: fetch END's /metrics once a second until $dir/stop exists (at most the
	# row's length and a minute), printing each fetch's HTTP status
	scrape() {
		"$wl" exec "${host[$1]}" -- timeout $((dur + warm + 60)) sh -c \
			'while [ ! -e "$0" ]; do sleep 1 & curl -s -o /dev/null -w "%{http_code}\n" -H "Accept: $1" -H "Accept-Encoding: gzip" "http://$2/metrics"; wait; done' \
			"$dir/stop" "$accept" "${maddr[$1]}"
	}
	ticks() { awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }
	load() { sbrun "$1" >"$2" 2>&1 || true; }
	sbrun() { "$wl" exec client -- sh -c "$sb --mysql-host=127.0.0.1 --mysql-port=3307 --threads=$threads --time=$1 --report-interval=1 run"; }
	# unmeasured, at least 10 s (sysbench's --time=0 never ends): the mux links open, the
	# level settles, the pages are cached
	load $((warm > 10 ? warm : 10)) "$dir/prime.log"
	echo "| round | case | TPS | entry CPU µs / txn | exit CPU µs / txn | both ends µs / txn | scrapes per end | loadavg before → after |"
	echo "|---:|---|---:|---:|---:|---:|---:|---|"
	local -A fig # "ROUND/CASE" → "tps entry exit both" (CPU seconds per transaction)
	local round name out before after e0 x0 e1 x1 txns tps scrapes spids line cpe cpx cpb
	for ((round = 1; round <= ${METRICS_ROUNDS:-6}; round++)); do
		local order=(scraped "not scraped")
		((round % 2)) || order=("not scraped" scraped)
		for name in "${order[@]}"; do
			out="$dir/$round-${name// /-}.log"
			rm -f "$dir/stop"
			spids=()
			if [[ $name == scraped ]]; then
				for end in entry exit; do
					scrape "$end" >"$dir/$round-scrapes-$end.log" 2>&1 &
					spids+=($!)
				done
			fi
			before=$(cut -d' ' -f1-3 /proc/loadavg)
			e0=$(ticks "${pid[entry]}") x0=$(ticks "${pid[exit]}")
			load $((dur + warm)) "$out"
			e1=$(ticks "${pid[entry]}") x1=$(ticks "${pid[exit]}")
			touch "$dir/stop"
			((${#spids[@]} == 0)) || wait "${spids[@]}" || true
			after=$(cut -d' ' -f1-3 /proc/loadavg)
			txns=$(awk '/transactions:/ { print $2; exit }' "$out")
			tps=$(awk -v warm="$warm" '/^\[ *[0-9]+s \]/ { t = $2; sub(/s/, "", t)
				if (t + 0 > warm) { for (i = 1; i < NF; i++) if ($i == "tps:") s += $(i+1); n++ } }
				END { if (n) printf "%.1f", s / n }' "$out")
			scrapes=-
			[[ $name == not\ scraped ]] || scrapes=$(cat "$dir/$round-scrapes-"*.log | awk '$1 == 200 { n++ } END { printf "%d", n / 2 }')
			if [[ ${txns:-0} -le 0 ]]; then
				echo "| $round | $name | failed | - | - | - | $scrapes | $before → $after |"
				continue
			fi
			line=$(awk -v e=$((e1 - e0)) -v x=$((x1 - x0)) -v hz="$hz" -v t="$txns" -v tps="${tps:-0}" \
				'BEGIN { printf "%s %.9g %.9g %.9g", tps, e / hz / t, x / hz / t, (e + x) / hz / t }')
			fig[$round/$name]=$line
			read -r tps cpe cpx cpb <<<"$line"
			awk -v r="$round" -v n="$name" -v tps="$tps" -v e="$cpe" -v x="$cpx" -v b="$cpb" -v s="$scrapes" -v l="$before → $after" \
				'BEGIN { printf "| %s | %s | %s | %.1f | %.1f | %.1f | %s | %s |\n", r, n, tps, e * 1e6, x * 1e6, b * 1e6, s, l }'
		done
	done
	echo
	echo "| scraped ÷ not scraped (geometric mean of the rounds; 95% interval) | ratio | interval | rounds | goal | verdict |"
	echo "|---|---:|---|---:|---|---|"
	for ((round = 1; round <= ${METRICS_ROUNDS:-6}; round++)); do
		[[ -n ${fig[$round/scraped]:-} && -n ${fig[$round/not scraped]:-} ]] || continue
		paste -d' ' <(printf 'tps\nentry\nexit\nboth\n') <(tr ' ' '\n' <<<"${fig[$round/scraped]}") <(tr ' ' '\n' <<<"${fig[$round/not scraped]}")
	done | awk -f scripts/paired-ratio.awk | awk -F'|' '
		BEGIN { what["both"] = "both ends, CPU per transaction"; what["entry"] = "entry, CPU per transaction"
			what["exit"] = "exit, CPU per transaction"; what["tps"] = "TPS" }
		{ goal = "(reference)"; verdict = ""
		  if ($1 == "both") { goal = "≤ 1.01x (under 1% more)"
			verdict = $4 == "-" ? "one round: no interval" : $4 <= 1.01 ? "under 1%" : $3 > 1.01 ? "over 1%" : "not resolved: more rounds" }
		  printf "| %s | %.3fx | %s | %s | %s | %s |\n", what[$1], $2, ($3 == "-" ? "-" : sprintf("%.3f-%.3f", $3, $4)), $5, goal, verdict }'
	echo
	echo "(sysbench output, scrapes, tunnel --stats and the first scrape of each end: $dir)" >&2
	)
}

part1() { run 'Throughput' "$bt" | table "case" MB/s cpu-ms/MB; }
part2() { run 'Ratio' 3x | table "corpus/method" ratio cpu-ms/MB MB/s; }
part4() { run 'Frame' "$bt" | table "op" MB/s ratio B/op allocs/op; }
part5() { run 'PingPong' "$bt" | table "case" ns/op cpu-us/op allocs/op; }
part8() { run 'Relay' 20000x | table "case" ns/op cpu-us/op q/s; }
if want 1; then
	bench_section 1 "1. Loopback throughput, no shaping ($(nproc) cores; cpu-ms/MB includes the client and sink, see the direct row)" part1
fi
if want 2; then
	bench_section 2 "2. Compression ratio and CPU per MB on MySQL-like traffic (same bytes; one core)" part2
fi
if want 3 && need_lab 3; then
	bench_section 3 "3. In the lab: sysbench oltp_read_only, ${LAB_THREADS:-32} threads, ${LAB_DURATION:-60s} (+${LAB_WARMUP:-20s} warmup), $(nproc) cores" lab
fi
if want 4; then
	bench_section 4 "4. Framing (64KiB groups of binlog-like bytes)" part4
fi
if want 5; then
	bench_section 5 "5. Round trip of a 40-byte request through entry+exit (loopback)" part5
fi
if want 6 && need_lab 6; then
	RELAY_DURATION=${RELAY_DURATION:-20s} RELAY_WARMUP=${RELAY_WARMUP:-5s}
	bench_section 6 "6. Relays in one unshaped lab: oltp_read_only, ${RELAY_DURATION} (+${RELAY_WARMUP} warmup), $(nproc) cores" relays
fi
if want 7 && need_lab 7; then
	bench_section 7 "7. Replication --quick: native vs tunnel" replication
fi
if want 8; then
	bench_section 8 "8. Relay cost per query on loopback (oltp_read_only's queries and replies; cpu-us/op includes client, server and relay processes)" part8
fi
if want 9 && need_lab 9; then
	bench_section 9 "9. The metrics endpoint's cost: oltp_read_only through the tunnel, 20 mbit, ${METRICS_THREADS:-32} threads, ${METRICS_DURATION:-60s} (+${METRICS_WARMUP:-10s} warmup), scraped every second or not, ${METRICS_ROUNDS:-6} rounds, $(nproc) cores" metrics_cost
fi

# goals: the rows parts 3 and 6 measured and the goals files gathered, judged by
# `wirelab tunnel goals` into $GOALS_FILE, whose tables this section prints.
goals() {
	local args=(--out "$GOALS_FILE") f
	if [[ $(wc -l <"$goal_rows") -gt 1 ]]; then
		args+=(--judge "$goal_rows" --command "$BENCH_CMD" --date "$(bench_span "$bench_start")")
	fi
	while read -r f; do args+=(--with "$f"); done <"$goal_files"
	bin/wirelab tunnel goals "${args[@]}"
}
if [[ $(wc -l <"$goal_rows") -gt 1 || -s $goal_files ]]; then
	[[ -x bin/wirelab ]] || { echo "bin/wirelab missing: make build" >&2; exit 1; }
	bench_section goals "Goals, judged by \`wirelab tunnel goals --judge\`" goals
	bench_quote docs/tunnel.md goals bin/wirelab tunnel goals --table "$GOALS_FILE"
	bench_quote README.md goals bin/wirelab tunnel goals --summary "$GOALS_FILE"
fi
