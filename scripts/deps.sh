#!/usr/bin/env bash
# Installs what wirelab needs on Debian/Ubuntu, only what is missing. Idempotent.
set -euo pipefail

need_root() { if [ "$(id -u)" != 0 ]; then echo "deps: run as root (apt-get)" >&2; exit 1; fi; }

# command -> Debian package
declare -A pkgs=(
  [mariadbd]=mariadb-server [mariadb-install-db]=mariadb-server [mariadb]=mariadb-client
  [sysbench]=sysbench [iperf3]=iperf3 [socat]=socat [ip]=iproute2 [tc]=iproute2
  [iptables]=iptables [ethtool]=ethtool [chromium]=chromium [jq]=jq [pgrep]=procps [ss]=iproute2
  [setpriv]=util-linux [ping]=iputils-ping [sshd]=openssh-server [ssh-keygen]=openssh-client
  [rsync]=rsync [promtool]=prometheus [prometheus]=prometheus
)
# PostgreSQL keeps its server binaries (initdb, postgres, pgbench) out of PATH, under
# /usr/lib/postgresql/<major>/bin: look there. postgresql-15 brings pgbench and, as a
# dependency, postgresql-client-15 (psql, pg_basebackup).
declare -A pg_pkgs=([initdb]=postgresql-15 [postgres]=postgresql-15 [pgbench]=postgresql-15
  [psql]=postgresql-client-15 [pg_basebackup]=postgresql-client-15)
missing=()
# The galera study's provider is a library, not a command.
if ! [ -e /usr/lib/galera/libgalera_smm.so ] && ! [ -e /usr/lib/libgalera_smm.so ]; then
  missing+=(galera-4)
fi
for cmd in "${!pkgs[@]}"; do
  if ! command -v "$cmd" >/dev/null 2>&1 && ! [ -x "/usr/sbin/$cmd" ] && ! [ -x "/usr/bin/$cmd" ]; then
    missing+=("${pkgs[$cmd]}")
  fi
done
for cmd in "${!pg_pkgs[@]}"; do
  if ! compgen -G "/usr/lib/postgresql/*/bin/$cmd" >/dev/null; then
    missing+=("${pg_pkgs[$cmd]}")
  fi
done
if [ "${#missing[@]}" -gt 0 ]; then
  need_root
  mapfile -t uniq < <(printf '%s\n' "${missing[@]}" | sort -u)
  echo "deps: installing ${uniq[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${uniq[@]}" >/dev/null
fi
# The Debian package may start its own server; wirelab runs its own servers and must not
# leave one behind, so stop a service the install started (only if we installed it now).
if [ "${#missing[@]}" -gt 0 ] && printf '%s\n' "${missing[@]}" | grep -q mariadb-server; then
  (service mariadb stop || true) >/dev/null 2>&1
fi
# The same for PostgreSQL: Debian creates and starts cluster 15/main on port 5432. Stop it
# and keep it from starting at boot; wirelab's servers use temp datadirs and their own
# configuration, and never this cluster.
if [ "${#missing[@]}" -gt 0 ] && printf '%s\n' "${missing[@]}" | grep -q postgresql-15; then
  (pg_ctlcluster 15 main stop || service postgresql stop || true) >/dev/null 2>&1
  (update-rc.d postgresql disable || systemctl disable postgresql || true) >/dev/null 2>&1
fi
# openssh-server is for the SSH tests, which run their own sshd inside namespaces: a
# service the install started on this machine's port 22 is stopped and kept from boot.
if [ "${#missing[@]}" -gt 0 ] && printf '%s\n' "${missing[@]}" | grep -q openssh-server; then
  (service ssh stop || true) >/dev/null 2>&1
  (update-rc.d ssh disable || systemctl disable ssh || true) >/dev/null 2>&1
fi
# prometheus is for the tunnel's metrics tests (promtool check metrics, a Prometheus the e2e
# test starts with its own configuration): a service the install started is stopped.
if [ "${#missing[@]}" -gt 0 ] && printf '%s\n' "${missing[@]}" | grep -q '^prometheus$'; then
  (service prometheus stop || true) >/dev/null 2>&1
  (update-rc.d prometheus disable || systemctl disable prometheus || true) >/dev/null 2>&1
fi
if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then export PATH=$PATH:/usr/local/go/bin; fi
command -v go >/dev/null 2>&1 || { echo "deps: Go is not installed (want go $(sed -n "s/^go //p" go.mod), as go.mod says, in PATH)" >&2; exit 1; }
go mod download
echo "deps: ok"
