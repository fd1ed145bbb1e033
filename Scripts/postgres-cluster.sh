#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for arrival's PostgreSQL tests (issue 31): initdb and pg_ctl as an
# unprivileged user, listening on a Unix socket in DIR and on 127.0.0.1 at a free port, with a role
# `arrival` that signs in with a password (scram-sha-256) over TCP, and a database `arrival_test`.
#
#   Scripts/postgres-cluster.sh start DIR   make and start the cluster in DIR (a new or empty folder); prints
#                                           `export` lines for the tests: ARRIVAL_TEST_POSTGRES_URL (no
#                                           password in it), PGPASSFILE (a .pgpass file in DIR holding it)
#   Scripts/postgres-cluster.sh stop DIR    stop it (the folder is left for the caller to remove)
#   Scripts/postgres-cluster.sh crash DIR   stop it as a crash would (`pg_ctl -m immediate`: no checkpoint,
#                                           connections cut, recovery at the next start)
#   Scripts/postgres-cluster.sh resume DIR  start it again, on the same port (after stop or crash)
#
# Needs Debian's `postgresql` (its binaries in /usr/lib/postgresql/*/bin). Run as root, the cluster runs as
# the `postgres` user (or `nobody` when there is none): PostgreSQL refuses to run as root.
set -euo pipefail
usage() { sed -n '2,15p' "$0" >&2; exit 2; }
[ $# -eq 2 ] || usage
command=$1
dir=$(mkdir -p "$2" && cd "$2" && pwd)

bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -n "$bin" ] && [ -x "$bin/initdb" ] || { echo "postgres-cluster: no PostgreSQL server binaries (apt-get install postgresql)" >&2; exit 1; }

# Runs a command as the cluster's owner.
as_owner() {
    if [ "$(id -u)" -ne 0 ]; then
        "$@"
    else
        runuser -u "$owner" -- "$@"
    fi
}
owner=$(id -un)
if [ "$(id -u)" -eq 0 ]; then
    owner=$(getent passwd postgres >/dev/null && echo postgres || echo nobody)
fi

# Starts the cluster in $dir on $port.
start_server() {
    as_owner "$bin/pg_ctl" --pgdata="$dir/data" --log="$dir/server.log" --wait --timeout=60 start \
        -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$dir -c fsync=off \
            -c max_connections=100" >/dev/null \
        || { cat "$dir/server.log" >&2; exit 1; }
}

case "$command" in
start)
    [ -z "$(ls -A "$dir")" ] || { echo "postgres-cluster: $dir is not empty" >&2; exit 1; }
    chown "$owner" "$dir" 2>/dev/null || true
    chmod 700 "$dir"
    password=$(head -c 24 /dev/urandom | base64 | tr -d '/+=')
    printf '%s\n' "$password" > "$dir/superuser-password"
    chown "$owner" "$dir/superuser-password" 2>/dev/null || true
    as_owner "$bin/initdb" --pgdata="$dir/data" --username=postgres --pwfile="$dir/superuser-password" \
        --auth-local=trust --auth-host=scram-sha-256 --encoding=UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 \
        || { cat "$dir/initdb.log" >&2; exit 1; }
    rm -f "$dir/superuser-password"
    # A free port: bind to port 0 and keep what the kernel chose.
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    start_server
    as_owner "$bin/psql" --quiet --no-psqlrc --host="$dir" --port="$port" --username=postgres --dbname=postgres \
        --set=ON_ERROR_STOP=1 --command="CREATE ROLE arrival LOGIN CREATEDB PASSWORD '$password'" \
        --command="CREATE DATABASE arrival_test OWNER arrival" >/dev/null
    # The password reaches the tests only through a .pgpass file (mode 0600, as libpq insists).
    printf '127.0.0.1:%s:*:arrival:%s\n' "$port" "$password" > "$dir/pgpass"
    chmod 600 "$dir/pgpass"
    echo "$port" > "$dir/port"
    echo "export ARRIVAL_TEST_POSTGRES_URL=postgres://arrival@127.0.0.1:$port/arrival_test"
    echo "export PGPASSFILE=$dir/pgpass"
    ;;
stop)
    [ -d "$dir/data" ] || exit 0
    as_owner "$bin/pg_ctl" --pgdata="$dir/data" --mode=fast --wait stop >/dev/null 2>&1 || true
    ;;
crash)
    as_owner "$bin/pg_ctl" --pgdata="$dir/data" --mode=immediate --wait stop >/dev/null
    ;;
resume)
    port=$(cat "$dir/port")
    start_server
    ;;
*) usage ;;
esac
