#!/usr/bin/env bash
# bench-ssh: wirelab over SSH (sshd hosts in namespaces) against the namespace lab, alternating,
# as test/e2e's benchmarks measure it; each prints its rounds and a markdown table, written to
# docs/bench/ssh.md (scripts/benchpage.sh), one section per benchmark:
#   1. BenchmarkSSHvsLab: the quick bandwidth study per point, SSH ÷ lab
#   2. BenchmarkSSHReplicationVsLab: replication's tunnel ÷ native wire bytes, SSH ÷ lab
#   3. BenchmarkSSHTwoClients: two client hosts against one
# Needs root and bin/wirelab (make build).
#   BENCHES="1 3" scripts/bench-ssh.sh   runs only those benchmarks
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/benchpage.sh
BENCH_CMD=$(bench_command BENCHES -- scripts/bench-ssh.sh)
bench_page docs/bench/ssh.md scripts/bench-ssh.sh "bench-ssh: real hosts over SSH against the lab"
benches=" ${BENCHES:-1 2 3} "

# ssh_bench NAME: one benchmark, its rounds as a list and its table, without go test's own lines.
ssh_bench() {
	go test -run '^$' -bench "^Benchmark$1\$" -benchtime 1x -timeout 60m ./test/e2e/ |
		awk '/^round / { print "- " $0; next } /^\|/ { if (!table) print ""; table = 1; print; next }
			/^(goos|goarch|pkg|cpu|PASS|ok|Benchmark)/ { next } NF { print ""; print; table = 0 }'
}

if [[ $benches == *" 1 "* ]]; then
	bench_section 1 "1. The quick bandwidth study, SSH against the lab (BenchmarkSSHvsLab)" ssh_bench SSHvsLab
fi
if [[ $benches == *" 2 "* ]]; then
	bench_section 2 "2. Replication's tunnel ÷ native wire bytes, SSH against the lab (BenchmarkSSHReplicationVsLab)" ssh_bench SSHReplicationVsLab
fi
if [[ $benches == *" 3 "* ]]; then
	bench_section 3 "3. Two client hosts against one (BenchmarkSSHTwoClients)" ssh_bench SSHTwoClients
fi
