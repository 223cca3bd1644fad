#!/usr/bin/env bash
# Runs every native Go fuzz target of the module (found by `go test -list '^Fuzz'`, so a
# target added later is included), one after another. FUZZTIME is each target's time
# (a Go duration, e.g. 30s); unset, 10 minutes in all are divided among the targets. Stops
# at the first target that fails and prints where Go wrote the failing input: commit it,
# with the fix, as a seed of its target.
#   FUZZTIME=30s FUZZPARALLEL=1 scripts/fuzz.sh
# FUZZPARALLEL is the number of fuzz workers per target (default 1: one core left free).
set -euo pipefail
cd "$(dirname "$0")/.."
parallel=${FUZZPARALLEL:-1}
total=600 # seconds, when FUZZTIME is unset

# "package target" per line. -short: a TestMain that prepares root tests (test/e2e builds
# the binary) skips that for a listing.
mapfile -t targets < <(go test -short -list '^Fuzz' ./... | awk '
	/^Fuzz/ { names[n++] = $1; next }
	/^ok/   { for (i = 0; i < n; i++) print $2, names[i]; n = 0 }')
if [[ ${#targets[@]} -eq 0 ]]; then
	echo "fuzz: no fuzz targets found" >&2
	exit 1
fi
each=${FUZZTIME:-$((total / ${#targets[@]}))s}
echo "fuzz: ${#targets[@]} targets, $each each, $parallel worker(s)"

log=$(mktemp)
trap 'rm -f "$log"' EXIT
for t in "${targets[@]}"; do
	pkg=${t% *} name=${t#* }
	echo "fuzz: $name ($pkg) for $each"
	# -fuzzminimizetime: Go minimizes each new input that widens coverage for up to 60s
	# by default, out of the target's own time; on seeds of real traffic (kilobytes) that
	# took nearly all of it (500 executions in 20s instead of ~100000). 1000 tries each.
	if go test -run '^$' -fuzz "^$name\$" -fuzztime "$each" -fuzzminimizetime 1000x \
		-parallel "$parallel" "$pkg" 2>&1 | tee "$log"; then
		continue
	fi
	dir=$(go list -f '{{.Dir}}' "$pkg")
	input=$(sed -n 's/.*Failing input written to \(testdata\/fuzz\/[^ ]*\).*/\1/p' "$log" | head -n 1)
	if [[ -n $input ]]; then
		echo "fuzz: $name failed; the failing input is ${dir#"$PWD"/}/$input" >&2
		echo "fuzz: re-run it with: go test -run '$name/${input##*/}' $pkg" >&2
		exit 1
	fi
	# Go before 1.27 may end a run at its -fuzztime with a bare "context deadline
	# exceeded" and no input when a busy machine delays a worker's stop
	# (golang.org/issue/75804): not a finding. The target's corpus must still pass.
	if grep -qx '    context deadline exceeded' "$log" && go test -count=1 -run "^$name\$" "$pkg"; then
		echo "fuzz: $name: Go's fuzzing coordinator missed its own deadline (golang.org/issue/75804); no input failed, the corpus passes" >&2
		continue
	fi
	echo "fuzz: $name failed without writing an input (see its output above)" >&2
	exit 1
done
echo "fuzz: every target ran $each without a failure"
