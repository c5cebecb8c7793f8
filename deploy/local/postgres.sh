#!/usr/bin/env bash
# Starts or stops a throwaway PostgreSQL 15 server on 127.0.0.1 (Debian's server binaries).
#   postgres.sh start DIR [PORT]   initializes DIR/data once, starts it, prints the connection URL
#   postgres.sh stop DIR           stops the server started in DIR
#   postgres.sh crash DIR          stops it the hard way (immediate: no checkpoint, crash recovery at the next start)
#   postgres.sh dump-schema DIR    prints the schema of its database as docs/schema.sql holds it: pg_dump --schema-only
#                                  without owners, privileges, the version lines and the per-run \restrict keys
# fsync is off (for tests and local runs only) unless POSTGRES_FSYNC=on, which makes a crash a real crash;
# POSTGRES_OPTIONS adds server options (e.g. "-c track_commit_timestamp=on" for the end-to-end benchmark);
# POSTGRES_TLS_DIR (server.pem, server.key, ca.pem from tls-certs.sh) turns TLS on with that certificate.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
command=${1:?usage: postgres.sh start|stop DIR [PORT]}
dir=${2:?usage: postgres.sh start|stop DIR [PORT]}
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
as_postgres=(runuser -u postgres --)
[[ $(id -u) -eq 0 ]] || as_postgres=()
mkdir -p "$dir"
case "$command" in
start)
    source "$here/close-inherited-fds.sh"
    port=${3:-$("$here/free-port.sh")}
    if [[ $(id -u) -eq 0 ]]; then
        chown postgres "$dir"
        # The postgres user must be able to reach DIR: let it traverse every ancestor (mktemp makes 0700).
        ancestor=$(dirname "$(realpath "$dir")")
        while [[ "$ancestor" != "/" ]]; do chmod o+x "$ancestor"; ancestor=$(dirname "$ancestor"); done
    fi
    if [[ ! -f "$dir/data/PG_VERSION" ]]; then
        "${as_postgres[@]}" "$bin/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 >"$dir/initdb.log" 2>&1
    fi
    tls=""
    if [[ -n "${POSTGRES_TLS_DIR:-}" ]]; then
        # The server reads its key only when the key belongs to it and nobody else may read it.
        mkdir -p "$dir/tls"
        cp "$POSTGRES_TLS_DIR/server.pem" "$POSTGRES_TLS_DIR/server.key" "$POSTGRES_TLS_DIR/ca.pem" "$dir/tls/"
        chmod 0600 "$dir/tls/server.key"
        [[ $(id -u) -eq 0 ]] && chown -R postgres "$dir/tls"
        tls="-c ssl=on -c ssl_cert_file=$dir/tls/server.pem -c ssl_key_file=$dir/tls/server.key -c ssl_ca_file=$dir/tls/ca.pem"
    fi
    # pg_ctl waits until the server accepts connections or its process ends (it notices a dead postmaster at once);
    # its time limit is only a guard against a hang, so a slow start on a loaded machine is not a failure. A port
    # taken between free-port.sh and the server's bind (another test, an outgoing connection) ends the server: then
    # a new port is tried, unless the caller named one.
    for attempt in 1 2 3 4 5; do
        : > "$dir/postgres.log"
        [[ $(id -u) -eq 0 ]] && chown postgres "$dir/postgres.log"
        if "${as_postgres[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w -t 3600 start \
            -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=${POSTGRES_FSYNC:-off} -c synchronous_commit=${POSTGRES_FSYNC:-off} -c max_connections=200 $tls ${POSTGRES_OPTIONS:-}" >/dev/null; then
            break
        fi
        if [[ -z ${3:-} && $attempt -lt 5 ]] && grep -qE 'could not bind|could not create any TCP/IP sockets' "$dir/postgres.log"; then
            port=$("$here/free-port.sh")
            continue
        fi
        echo "PostgreSQL did not start in $dir (port $port):" >&2
        tail -n 20 "$dir/postgres.log" >&2
        exit 1
    done
    echo "$port" > "$dir/postgres.port"
    echo "postgres://postgres@127.0.0.1:$port/postgres"
    ;;
stop)
    [[ -f "$dir/data/postmaster.pid" ]] || exit 0
    "${as_postgres[@]}" "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null || true
    ;;
crash)
    [[ -f "$dir/data/postmaster.pid" ]] || exit 0
    "${as_postgres[@]}" "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null || true
    ;;
dump-schema)
    "$bin/pg_dump" --schema-only --no-owner --no-privileges -h 127.0.0.1 -p "$(cat "$dir/postgres.port")" -U postgres postgres \
        | grep -vE '^(-- Dumped (from|by) |\\(un)?restrict )'
    ;;
*) echo "usage: postgres.sh start|stop|crash|dump-schema DIR [PORT]" >&2; exit 2 ;;
esac
