#!/bin/bash
# Capture the binlog of the replication study's workload for the tunnel's offline benchmarks
# (BenchmarkCaptureWindow in internal/tunnel): a throwaway local MariaDB (unix socket only,
# ROW binlog), sysbench prepare (10 x 10000 rows, kept as prepare.binlog) and then
# oltp_write_only at a fixed rate with a heartbeat row every 100 ms (write.binlog).
# Starts a database: run it through the machine's measurement lock.
#   scripts/capture-binlog.sh OUTDIR [QPS] [SECONDS]
set -eu
out=${1:?usage: capture-binlog.sh OUTDIR [QPS] [SECONDS]}
qps=${2:-1200}
secs=${3:-45}
mkdir -p "$out"
d=$(mktemp -d)
sock=$d/sock
cleanup() {
	mariadb-admin --socket="$sock" -uroot shutdown 2>/dev/null || true
	sleep 1
	rm -rf "$d"
}
trap cleanup EXIT
mariadb-install-db --no-defaults --datadir="$d/data" --user=root --auth-root-authentication-method=normal >/dev/null
mariadbd --no-defaults --user=root --datadir="$d/data" --socket="$sock" --skip-networking --pid-file="$d/pid" \
	--log-error="$d/err" --log-bin="$d/data/mysql-bin" --binlog-format=ROW --server-id=1 --sync-binlog=0 \
	--innodb-flush-log-at-trx-commit=2 --innodb-buffer-pool-size=512M --performance-schema=OFF --tmpdir="$d" &
for _ in $(seq 50); do mariadb --socket="$sock" -uroot -e 'select 1' >/dev/null 2>&1 && break; sleep 0.2; done
mariadb --socket="$sock" -uroot -e 'create database sbtest; create table sbtest.hb (id int primary key, ts datetime(6))'
sb="--db-driver=mysql --mysql-socket=$sock --mysql-user=root --mysql-db=sbtest --tables=10 --table-size=10000"
# shellcheck disable=SC2086
sysbench oltp_write_only $sb --threads=8 prepare >/dev/null
mariadb --socket="$sock" -uroot -e 'flush binary logs'
(for _ in $(seq $((secs * 10))); do echo "REPLACE INTO sbtest.hb VALUES (1, NOW(6));"; sleep 0.1; done) |
	mariadb --socket="$sock" -uroot &
hb=$!
# shellcheck disable=SC2086
sysbench oltp_write_only $sb --threads=4 --rate=$((qps / 6)) --time="$secs" run | grep -E "transactions:|queries:"
wait "$hb" # not a bare wait: mariadbd is a background job of this shell too
mariadb --socket="$sock" -uroot -e 'flush binary logs'
cp "$d/data/mysql-bin.000001" "$out/prepare.binlog"
cp "$d/data/mysql-bin.000002" "$out/write.binlog"
ls -l "$out"
