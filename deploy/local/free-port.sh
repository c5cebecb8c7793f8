#!/usr/bin/env bash
# Prints a TCP port on 127.0.0.1 that is free now, chosen at random from 10000-19999: below the kernel's ephemeral
# range (32768 and up here), so that no outgoing connection of a service started meanwhile can take it before the
# service it is for binds it (a port the kernel handed out as ephemeral once was: customer-api's admin port, picked
# before the other services started, was in use when customer-api bound it). The tests' own ports are 20000-32767.
# A port is not handed out again for two minutes, by any call on this machine (a file in the temporary directory,
# under a lock, remembers them): a script picks several ports before the services they are for bind them, and two
# random picks of one run were once the same port (customer-api then found it taken by another service).
#   FREE_PORT_REGISTRY          the registry file (default: appstore-free-ports in the temporary directory)
#   FREE_PORT_RESERVED_SECONDS  how long a port handed out stays reserved (default 120)
# Its test gives it a registry of its own and an hour, so that no pick of the test expires however slow the machine.
exec python3 - <<'PY'
import fcntl, os, random, socket, sys, tempfile, time
RESERVED_SECONDS = float(os.environ.get("FREE_PORT_RESERVED_SECONDS") or 120)
REGISTRY = os.environ.get("FREE_PORT_REGISTRY") or os.path.join(tempfile.gettempdir(), "appstore-free-ports")
low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
top = min(19999, low - 1)
with open(REGISTRY, "a+") as registry:
    fcntl.flock(registry, fcntl.LOCK_EX)
    registry.seek(0)
    now = time.time()
    recent = {}
    for line in registry:
        fields = line.split()
        if len(fields) == 2 and fields[0].isdigit() and now - float(fields[1]) < RESERVED_SECONDS:
            recent[int(fields[0])] = fields[1]
    for _ in range(500):
        port = random.randint(10000, top)
        if port in recent:
            continue
        s = socket.socket()
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            continue
        finally:
            s.close()
        recent[port] = f"{now:.3f}"
        registry.seek(0)
        registry.truncate()
        registry.write("".join(f"{p} {t}\n" for p, t in recent.items()))
        print(port)
        sys.exit(0)
sys.exit("no free port in 10000-%d" % top)
PY
