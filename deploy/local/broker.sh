#!/usr/bin/env bash
# Starts or stops a Tansu broker on 127.0.0.1 with in-memory storage.
#   broker.sh start DIR [PORT]   starts it (free port unless given), prints "127.0.0.1:PORT" when it accepts connections
#   broker.sh start-tls DIR CERT_DIR
#                                a broker reached only over mutual TLS: Tansu on an inner port behind
#                                kafka-tls-proxy.py (CERT_DIR from tls-certs.sh, server name localhost); prints
#                                "localhost:PORT"
#   broker.sh start-sasl DIR     a broker that demands SASL (Tansu --authentication; SCRAM-SHA-256/512)
#   broker.sh stop DIR           stops the broker started in DIR
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
command=${1:?usage: broker.sh start|start-tls|start-sasl|stop DIR [PORT|CERT_DIR]}
dir=${2:?usage: broker.sh start|stop DIR [PORT]}
mkdir -p "$dir"
# Waits until PORT accepts connections for as long as the process in PIDFILE lives: a slow start on a loaded machine
# is not a failure (an hour is only a guard against a hang). Returns 1, its LOG shown, if the process died.
await_port() {
    local port=$1 pidfile=$2 log=$3 started=$SECONDS
    while (( SECONDS - started < 3600 )); do
        python3 -c "import socket,sys; socket.create_connection(('127.0.0.1', $port), 0.2)" 2>/dev/null && return 0
        kill -0 "$(cat "$pidfile")" 2>/dev/null || { cat "$log" >&2; return 1; }
        sleep 0.1
    done
    echo "nothing accepted connections on $port" >&2
    exit 1
}

# Starts Tansu listening on PORT and advertising ADVERTISED, with extra options; returns 1 if it died starting.
start_tansu() {
    local port=$1 advertised=$2; shift 2
    source "$here/close-inherited-fds.sh"
    source "$here/env.sh"
    # Its own session: a Ctrl-C meant for the script must not stop the broker before the services are down.
    setsid nohup "$TANSU_BIN" broker --listener-url "tcp://127.0.0.1:$port" --advertised-listener-url "tcp://$advertised" \
        --storage-engine memory://tansu/ "$@" > "$dir/tansu.log" 2>&1 &
    echo $! > "$dir/tansu.pid"
    echo "$port" > "$dir/tansu.port"
    await_port "$port" "$dir/tansu.pid" "$dir/tansu.log"
}

# start_on_free_port [OPTIONS]: Tansu on a free port, another one if the port was taken before Tansu bound it (another
# test, an outgoing connection); prints the port.
start_on_free_port() {
    local port attempt
    for attempt in 1 2 3 4 5; do
        port=$("$here/free-port.sh")
        if start_tansu "$port" "127.0.0.1:$port" "$@" >&2; then echo "$port"; return 0; fi
    done
    echo "Tansu did not start after $attempt ports" >&2
    exit 1
}

case "$command" in
start)
    if [[ -n ${3:-} ]]; then
        port=$3
        start_tansu "$port" "127.0.0.1:$port" || exit 1
    else
        port=$(start_on_free_port)
    fi
    echo "127.0.0.1:$port"
    ;;
start-sasl)
    port=$(start_on_free_port --authentication)
    echo "127.0.0.1:$port"
    ;;
start-tls)
    certificates=${3:?usage: broker.sh start-tls DIR CERT_DIR}
    inner=$("$here/free-port.sh")
    outer=$("$here/free-port.sh")
    start_tansu "$inner" "localhost:$outer" || exit 1
    # The proxy writes its own pid (setsid may fork, and then $! is not the proxy's: stop left proxies running).
    setsid bash -c 'echo $$ > "$1"; exec python3 "$2" "$3" "$4" "$5" --require-client-certificate' _ \
        "$dir/proxy.pid" "$here/kafka-tls-proxy.py" "$outer" "$inner" "$certificates" > "$dir/proxy.log" 2>&1 < /dev/null &
    for _ in $(seq 1 50); do [[ -s "$dir/proxy.pid" ]] && break; sleep 0.1; done
    await_port "$outer" "$dir/proxy.pid" "$dir/proxy.log" || exit 1
    echo "localhost:$outer"
    ;;
stop)
    if [[ -f "$dir/proxy.pid" ]]; then kill "$(cat "$dir/proxy.pid")" 2>/dev/null || true; rm -f "$dir/proxy.pid"; fi
    [[ -f "$dir/tansu.pid" ]] || exit 0
    pid=$(cat "$dir/tansu.pid")
    kill "$pid" 2>/dev/null || true
    # Tansu (in-memory storage, nothing to flush) does not exit on SIGTERM: give it a second, then kill it.
    for _ in $(seq 1 10); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    rm -f "$dir/tansu.pid"
    ;;
*) echo "usage: broker.sh start|start-tls|start-sasl|stop DIR [PORT|CERT_DIR]" >&2; exit 2 ;;
esac
