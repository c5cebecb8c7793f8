#!/usr/bin/env bash
# Prints a TCP port on 127.0.0.1 that is free now, chosen at random from 10000-19999: below the kernel's ephemeral
# range (32768 and up here), so that no outgoing connection of a service started meanwhile can take it before the
# service it is for binds it (a port the kernel handed out as ephemeral once was: customer-api's admin port, picked
# before the other services started, was in use when customer-api bound it). The tests' own ports are 20000-32767.
exec python3 - <<'PY'
import random, socket, sys
low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
top = min(19999, low - 1)
for _ in range(500):
    port = random.randint(10000, top)
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port))
    except OSError:
        continue
    finally:
        s.close()
    print(port)
    sys.exit(0)
sys.exit("no free port in 10000-%d" % top)
PY
