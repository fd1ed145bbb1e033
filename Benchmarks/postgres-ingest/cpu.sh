#!/usr/bin/env bash
# One `arrival ingest` of a simulated fleet into a new PostgreSQL database: its wall time and the
# client's CPU (/usr/bin/time), and the server's CPU for it (issue 52): the user and system time of the
# postmaster's children (the backends, autovacuum), read from /proc before and after, once the run's
# backends have ended. The server must run on this machine, as one user may read its postmaster's
# /proc entry.
#
#   Benchmarks/postgres-ingest/cpu.sh PGDATA [ACTIVITIES]     (default: 20000)
#
# PGDATA is the server's data directory (Scripts/postgres-cluster.sh start DIR makes DIR/data). Same
# server URL, binary and fleet as run.sh.
set -euo pipefail
data=${1:?usage: cpu.sh PGDATA [ACTIVITIES]}
activities=${2:-20000}
source "$(dirname "$0")/../postgres-setup.sh"
db=arrival_cpu_$$
trap 'rm -rf "$work"; psql -q "$url" -c "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1 || true' EXIT
postmaster=$(head -1 "$data/postmaster.pid")
ticks() { awk '{print $14 + $15 + $16 + $17}' "/proc/$postmaster/stat"; }
psql -q "$url" -c "CREATE DATABASE $db" >/dev/null
sleep 1
before=$(ticks)
/usr/bin/time -f "%e %U %S" -o "$work/time" "$ARRIVAL" ingest "$tree" --db "$base/$db" --quiet
sleep 1
after=$(ticks)
read -r wall user system < "$work/time"
hz=$(getconf CLK_TCK)
python3 -c "import sys; w,u,s,t,hz=map(float,sys.argv[1:]); print(f'wall {w:.2f} s; client CPU {u+s:.2f} s ({u:.2f} user, {s:.2f} system); server CPU {t/hz:.2f} s')" \
    "$wall" "$user" "$system" "$((after - before))" "$hz"
