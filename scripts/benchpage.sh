# shellcheck shell=bash
# benchpage.sh: sourced by the bench scripts, so each writes its own page under docs/bench/.
#
# A page is a title, one line saying which script writes it, and one section per part the
# script measures. Each section starts with the command that produced it, its date, the
# machine (CPU model, cores, kernel, cpuidle driver) and the load average at its start and
# end, then holds exactly what the part printed. A run replaces the sections of the parts it
# ran and keeps the others; a part that fails leaves its section as it was. Earlier tables
# are in the page's git history, not on the page.
#
#   BENCH_CMD=$(bench_command KNOB... -- scripts/bench-x.sh "$@")   # before defaults are set
#   bench_page docs/bench/x.md scripts/bench-x.sh "bench-x: what it measures"
#   bench_section ID "Heading" FUNCTION [ARGS...]                 # prints and records
#   bench_quote FILE ID FUNCTION [ARGS...]   # a block another document quotes (README.md)
#
# The machine is read from BENCH_PROC (default /proc) and BENCH_SYS (default /sys), the time
# from bench_now; tests point them at fixtures (internal/docscheck).

BENCH_PROC=${BENCH_PROC:-/proc}
BENCH_SYS=${BENCH_SYS:-/sys}

# bench_now: the time a section starts or ends, UTC.
bench_now() { date -u '+%Y-%m-%d %H:%M'; }

# bench_span START: "START to END UTC", END now, its date left out when it is START's.
bench_span() {
	local start=$1 end
	end=$(bench_now)
	[[ ${end%% *} == "${start%% *}" ]] && end=${end#* }
	echo "$start to $end UTC"
}

# bench_load: the 1, 5 and 15 minute load averages.
bench_load() { cut -d' ' -f1-3 "$BENCH_PROC/loadavg"; }

# bench_machine: "CPU model, N cores, kernel K, cpuidle D".
bench_machine() {
	local model cores kernel idle
	model=$(awk -F': *' '/^model name/ { print $2; exit }' "$BENCH_PROC/cpuinfo" 2>/dev/null)
	cores=$(grep -c '^processor' "$BENCH_PROC/cpuinfo" 2>/dev/null)
	kernel=$(cat "$BENCH_PROC/sys/kernel/osrelease" 2>/dev/null)
	idle=$(cat "$BENCH_SYS/devices/system/cpu/cpuidle/current_driver" 2>/dev/null)
	echo "${model:-unknown CPU}, ${cores:-?} cores, kernel ${kernel:-unknown}, cpuidle ${idle:-none}"
}

# bench_command KNOB... -- SCRIPT [ARGS...]: the command line this run is, with the knobs
# (environment variables the script reads) that are set, as one would type it again.
bench_command() {
	local words=() v val
	while (($# > 0)) && [[ $1 != -- ]]; do
		v=$1
		shift
		[[ -n ${!v+set} ]] || continue
		val=${!v}
		if [[ $val =~ ^[A-Za-z0-9_.,:/=+-]+$ ]]; then words+=("$v=$val"); else words+=("$v=\"$val\""); fi
	done
	[[ ${1:-} == -- ]] && shift
	for v in "$@"; do
		if [[ $v =~ ^[A-Za-z0-9_.,:/=+-]+$ ]]; then words+=("$v"); else words+=("\"$v\""); fi
	done
	echo "${words[*]}"
}

# bench_page PAGE SCRIPT TITLE: the page this script's sections go to.
bench_page() {
	BENCH_PAGE=$1
	BENCH_SCRIPT=$2
	BENCH_TITLE=$3
}

# bench_section ID HEADING FUNCTION [ARGS...]: runs FUNCTION (its stdout printed as it comes
# and kept), then replaces section ID of the page with its output under HEADING. Returns
# FUNCTION's status; on failure the page is not touched.
bench_section() {
	local id=$1 heading=$2
	shift 2
	[[ $id =~ ^[A-Za-z0-9_-]+$ ]] || { echo "bench_section: bad id \"$id\"" >&2; return 2; }
	local body start load0 rc errexit=
	body=$(mktemp)
	start=$(bench_now)
	load0=$(bench_load)
	[[ $- == *e* ]] && errexit=1
	set +e
	(
		set -e
		"$@"
	) | tee "$body"
	rc=${PIPESTATUS[0]}
	[[ -n $errexit ]] && set -e
	if ((rc != 0)); then
		echo "bench: \"$heading\" failed (exit $rc); $BENCH_PAGE keeps its last table" >&2
		rm -f "$body"
		return "$rc"
	fi
	local span load1 section
	span=$(bench_span "$start")
	load1=$(bench_load)
	section=$(mktemp)
	{
		echo "<!-- bench section $id -->"
		echo "## $heading"
		echo
		echo "- command: \`${BENCH_CMD:?bench_section: BENCH_CMD unset}\`"
		echo "- date: $span"
		echo "- machine: $(bench_machine)"
		echo "- load average (1, 5, 15 min): $load0 at start, $load1 at end"
		echo
		# the part's output without its leading and trailing blank lines
		awk 'NF { for (; blank > 0; blank--) print ""; print; started = 1; next } started { blank++ }' "$body"
		echo "<!-- end bench section $id -->"
	} >"$section"
	rm -f "$body"
	bench_merge "$BENCH_PAGE" "$id" "$section"
	rm -f "$section"
}

# bench_merge PAGE ID FILE: PAGE with section ID replaced by FILE's (or added), the sections
# in ID order (numbers as numbers), under the page's title.
bench_merge() {
	local page=$1 id=$2 file=$3 dir f
	dir=$(mktemp -d)
	if [[ -f $page ]]; then
		awk -v dir="$dir" '
			/^<!-- bench section [A-Za-z0-9_-]+ -->$/ { out = dir "/" $4 }
			out { print > out }
			/^<!-- end bench section [A-Za-z0-9_-]+ -->$/ { close(out); out = "" }' "$page"
	fi
	cp "$file" "$dir/$id"
	mkdir -p "$(dirname "$page")"
	{
		echo "# $BENCH_TITLE"
		echo
		echo "Written by \`$BENCH_SCRIPT\`: each run replaces the sections of the parts it ran;"
		echo "earlier tables are in this page's git history."
		for f in $(cd "$dir" && ls | sort -V); do
			echo
			cat "$dir/$f"
		done
	} >"$page.tmp"
	mv "$page.tmp" "$page"
	rm -rf "$dir"
}

# bench_quote FILE ID FUNCTION [ARGS...]: replaces what FILE holds between its lines
# "<!-- bench quote ID: ... -->" (which says who writes the block) and
# "<!-- end bench quote ID -->" with FUNCTION's output, so a document outside docs/bench/
# (README.md, a topic page) quotes a table a script wrote, where its author put the block,
# a blank line on either side of it. FILE without the block, or a FUNCTION that fails, leaves FILE as it was and returns
# non-zero.
bench_quote() {
	local file=$1 id=$2 body rc errexit=
	shift 2
	[[ $id =~ ^[A-Za-z0-9_-]+$ ]] || { echo "bench_quote: bad id \"$id\"" >&2; return 2; }
	if ! grep -q "^<!-- bench quote $id: .* -->\$" "$file" || ! grep -qx "<!-- end bench quote $id -->" "$file"; then
		echo "bench_quote: $file has no block \"<!-- bench quote $id: ... -->\" ... \"<!-- end bench quote $id -->\"" >&2
		return 1
	fi
	body=$(mktemp)
	[[ $- == *e* ]] && errexit=1
	set +e
	(
		set -e
		"$@"
	) >"$body"
	rc=$?
	[[ -n $errexit ]] && set -e
	if ((rc != 0)); then
		echo "bench: the quote $id of $file failed (exit $rc); $file keeps its last one" >&2
		rm -f "$body"
		return "$rc"
	fi
	awk -v id="$id" -v body="$body" '
		$0 ~ "^<!-- bench quote " id ": .* -->$" { print; print ""; while ((getline l < body) > 0) print l; print ""; skip = 1; next }
		$0 == "<!-- end bench quote " id " -->" { skip = 0 }
		!skip' "$file" >"$file.tmp"
	mv "$file.tmp" "$file"
	rm -f "$body"
}
