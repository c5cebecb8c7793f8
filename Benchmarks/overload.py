"""Overload and slow-client checks of an HTTP service (ingest, customer-api), with raw sockets and asyncio.

Usage: overload.py URL BODY_FILE --connections N --seconds S [--pid PID] [--max-body B] [--body-timeout-s T]
                   [--answer-timeout-s A] [--at-least-ok N] [--ready-url URL] [--report]
  URL        the POST endpoint, e.g. http://127.0.0.1:8080/notifications
  BODY_FILE  the body every connection posts (keep-alive, one request after the other)
Prints one JSON object: requests, statuses (count per HTTP status), hangs (no answer within --answer-timeout-s,
10 s by default; a test that checks only that every request is answered gives a bound a loaded machine never reaches), errors
(connection refused/reset), ready (how often /ready answered 200 during the load, of how many), the peak
resident memory of PID (VmHWM, MiB), and the slow-client checks: a stalled body (408 or the connection closed, with
how long it took; no answer within the body timeout plus the answer timeout is a hang), and a body announced above
the limit (413 before it is sent). With --at-least-ok N the load goes on past --seconds until N requests were answered
200 (a test's "work was done", which a loaded machine does later rather than not at all).
"""
import argparse
import asyncio
import json
import multiprocessing
import time
import urllib.parse


async def request(reader, writer, head, body, timeout=10.0):
    writer.write(head + body)
    await writer.drain()
    status_line = await asyncio.wait_for(reader.readline(), timeout)
    if not status_line:
        raise ConnectionResetError("closed")
    status = int(status_line.split()[1])
    length = 0
    while True:
        line = await asyncio.wait_for(reader.readline(), timeout)
        if line in (b"\r\n", b""):
            break
        name, _, value = line.decode().partition(":")
        if name.lower() == "content-length":
            length = int(value.strip())
    if length:
        await asyncio.wait_for(reader.readexactly(length), timeout)
    return status


async def client(host, port, path, body, going_on, result, answer_timeout):
    head = (f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode()
    while going_on():
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), answer_timeout)
        except Exception as error:
            result["errors"] += 1
            result["lastError"] = repr(error)
            await asyncio.sleep(0.05)
            continue
        try:
            while going_on():
                status = await request(reader, writer, head, body, answer_timeout)
                result["requests"] += 1
                result["statuses"][str(status)] = result["statuses"].get(str(status), 0) + 1
                if status == 503:
                    await asyncio.sleep(0.01)
        except asyncio.TimeoutError:
            result["hangs"] += 1
        except Exception as error:
            result["errors"] += 1
            result["lastError"] = repr(error)
        finally:
            writer.close()


def watch_ready(ready_url, seconds, counts):
    """Asks /ready every 0.5 s for `seconds`, in a process of its own so the load generator's busy event loop
    never delays the probe (which would count the client's own stall against the server). counts: shared
    [ready, asked, slowest answer in ms, answered not ready, no answer within 2 s]."""
    import socket
    target = urllib.parse.urlparse(ready_url)
    host, port, path = target.hostname, target.port, target.path or "/ready"
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        asked = time.monotonic()
        ready = False
        try:
            with socket.create_connection((host, port), timeout=2) as sock:
                sock.settimeout(2)
                sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
                line = sock.makefile("rb").readline()
                ready = len(line.split()) > 1 and line.split()[1] == b"200"
                if not ready:
                    counts[3] += 1
        except OSError:
            counts[4] += 1
        counts[1] += 1
        counts[0] += 1 if ready else 0
        counts[2] = max(counts[2], int((time.monotonic() - asked) * 1000))
        time.sleep(0.5)


async def stalled_body(host, port, path, body_timeout, answer_timeout):
    """Announces 1000 bytes, sends 10, then waits: the server must answer 408 or close; no answer within the body
    timeout plus the answer timeout is a hang."""
    reader, writer = await asyncio.open_connection(host, port)
    writer.write(f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n".encode()
                 + b'{"signedPa')
    await writer.drain()
    started = time.monotonic()
    try:
        line = await asyncio.wait_for(reader.readline(), body_timeout + answer_timeout)
        answer = int(line.split()[1]) if line else "closed"
    except asyncio.TimeoutError:
        answer = "hang"
    writer.close()
    return {"answer": answer, "seconds": round(time.monotonic() - started, 2)}


async def oversized_body(host, port, path, max_body, answer_timeout):
    """Announces a body above the limit and sends none of it: 413 must come without it."""
    reader, writer = await asyncio.open_connection(host, port)
    writer.write(f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
                 f"Content-Length: {max_body * 40}\r\n\r\n".encode())
    await writer.drain()
    try:
        line = await asyncio.wait_for(reader.readline(), answer_timeout)
        answer = int(line.split()[1]) if line else "closed"
    except asyncio.TimeoutError:
        answer = "hang"
    writer.close()
    return answer


def peak_memory_mib(pid):
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        return None
    return None


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("body_file")
    parser.add_argument("--connections", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=15)
    parser.add_argument("--pid", type=int)
    parser.add_argument("--max-body", type=int, default=262144)
    parser.add_argument("--body-timeout-s", type=float, default=10)
    parser.add_argument("--answer-timeout-s", type=float, default=10,
                        help="a request unanswered this long counts as a hang")
    parser.add_argument("--at-least-ok", type=int, default=0,
                        help="go on past --seconds until this many requests were answered 200 (at most --answer-timeout-s "
                             "more): a test asks for work done, which a loaded machine does later, not in a window")
    parser.add_argument("--ready-url", help="where to ask /ready (default: the POST URL's host and port; ingest's operations port "
                                            "when OPERATIONS_PORT is set)")
    parser.add_argument("--report", action="store_true", help="print lines for people and exit 1 unless only 200/503, no hang, "
                                                               "always ready and under 300 MiB")
    args = parser.parse_args()
    url = urllib.parse.urlparse(args.url)
    body = open(args.body_file, "rb").read()
    result = {"requests": 0, "statuses": {}, "hangs": 0, "errors": 0, "ready": [0, 0]}
    started = time.monotonic()
    deadline = started + args.seconds
    processes = multiprocessing.get_context("fork")  # the watcher uses no asyncio: forking the running loop is safe
    counts = processes.Array("i", [0, 0, 0, 0, 0])
    ready_url = args.ready_url or f"http://{url.hostname}:{url.port}/ready"
    watcher = processes.Process(target=watch_ready, args=(ready_url, args.seconds, counts))
    watcher.start()
    last_call = deadline + args.answer_timeout_s

    def going_on():
        now = time.monotonic()
        return now < deadline or (now < last_call and result["statuses"].get("200", 0) < args.at_least_ok)

    tasks = [client(url.hostname, url.port, url.path, body, going_on, result, args.answer_timeout_s)
             for _ in range(args.connections)]
    await asyncio.gather(*tasks)
    await asyncio.get_running_loop().run_in_executor(None, watcher.join)
    result["ready"] = [counts[0], counts[1]]
    result["slowestReadyMs"] = counts[2]
    result["notReady"] = {"answered": counts[3], "timedOut": counts[4]}
    result["seconds"] = round(time.monotonic() - started, 1)
    result["requestsPerSecond"] = round(result["requests"] / result["seconds"])
    result["stalledBody"] = await stalled_body(url.hostname, url.port, url.path, args.body_timeout_s,
                                               args.answer_timeout_s)
    result["oversizedBody"] = await oversized_body(url.hostname, url.port, url.path, args.max_body,
                                                   args.answer_timeout_s)
    if args.pid:
        result["peakMemoryMiB"] = peak_memory_mib(args.pid)
    if not args.report:
        print(json.dumps(result))
        return 0
    r = result
    print(f"overload: {r['requests']} requests in {r['seconds']} s ({r['requestsPerSecond']}/s) from {args.connections} connections")
    print(f"  answers by status: {r['statuses']}  (anything but 200 and 503 is a failure)")
    print(f"  unanswered (hangs): {r['hangs']}; connection errors: {r['errors']}; /ready said ready {r['ready'][0]} of {r['ready'][1]} times (slowest {r['slowestReadyMs']} ms)")
    print(f"  peak memory: {r.get('peakMemoryMiB')} MiB; stalled body: {r['stalledBody']}; body announced above the limit: {r['oversizedBody']}")
    ok = set(r["statuses"]) <= {"200", "503"} and r["hangs"] == 0 and r["ready"][0] == r["ready"][1] and (r.get("peakMemoryMiB") or 0) < 300
    return 0 if ok else 1


if __name__ == "__main__":
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 65536), hard))
    raise SystemExit(asyncio.run(main()))
