#!/usr/bin/env bash
# Starts or stops a Tansu broker on 127.0.0.1 with in-memory storage.
#   broker.sh start DIR [PORT]   starts it (free port unless given), prints "127.0.0.1:PORT" when it accepts connections
#   broker.sh stop DIR           stops the broker started in DIR
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
command=${1:?usage: broker.sh start|stop DIR [PORT]}
dir=${2:?usage: broker.sh start|stop DIR [PORT]}
mkdir -p "$dir"
case "$command" in
start)
    source "$here/close-inherited-fds.sh"
    source "$here/env.sh"
    port=${3:-$("$here/free-port.sh")}
    # Its own session: a Ctrl-C meant for the script must not stop the broker before the services are down.
    setsid nohup "$TANSU_BIN" broker --listener-url "tcp://127.0.0.1:$port" --advertised-listener-url "tcp://127.0.0.1:$port" \
        --storage-engine memory://tansu/ > "$dir/tansu.log" 2>&1 &
    echo $! > "$dir/tansu.pid"
    echo "$port" > "$dir/tansu.port"
    for _ in $(seq 1 100); do
        if python3 -c "import socket,sys; socket.create_connection(('127.0.0.1', $port), 0.2)" 2>/dev/null; then
            echo "127.0.0.1:$port"
            exit 0
        fi
        kill -0 "$(cat "$dir/tansu.pid")" 2>/dev/null || { cat "$dir/tansu.log" >&2; exit 1; }
        sleep 0.1
    done
    echo "tansu did not accept connections on $port" >&2
    exit 1
    ;;
stop)
    [[ -f "$dir/tansu.pid" ]] || exit 0
    pid=$(cat "$dir/tansu.pid")
    kill "$pid" 2>/dev/null || true
    # Tansu (in-memory storage, nothing to flush) does not exit on SIGTERM: give it a second, then kill it.
    for _ in $(seq 1 10); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    rm -f "$dir/tansu.pid"
    ;;
*) echo "usage: broker.sh start|stop DIR [PORT]" >&2; exit 2 ;;
esac
