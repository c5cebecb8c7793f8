"""A minimal OTLP/HTTP JSON trace receiver for the local run and the tests (nothing to install):

    trace-collector.py serve PORT FILE     receives POST /v1/traces and appends one JSON line per span to FILE
    trace-collector.py show FILE [NAME]    prints the trace with the most services (or the one whose root span is
                                           NAME): trace id, then each span's service, name and duration

Each line: {"service", "traceId", "spanId", "parentSpanId", "name", "startNs", "endNs"} with ids in hex (OTLP/JSON
carries them hex-encoded; base64 from a protobuf-JSON encoder is converted).
"""
import base64
import binascii
import http.server
import json
import signal
import sys
import threading


def hex_id(value, size):
    """An id as lowercase hex, whether it arrived as hex or base64."""
    if not value:
        return ""
    if len(value) == size * 2:
        try:
            int(value, 16)
            return value.lower()
        except ValueError:
            pass
    try:
        return binascii.hexlify(base64.b64decode(value)).decode()
    except (binascii.Error, ValueError):
        return value


def spans_of(body):
    for resource in body.get("resourceSpans", []):
        attributes = {a["key"]: a.get("value", {}) for a in resource.get("resource", {}).get("attributes", [])}
        service = attributes.get("service.name", {}).get("stringValue", "?")
        for scope in resource.get("scopeSpans", []):
            for span in scope.get("spans", []):
                yield {
                    "service": service, "traceId": hex_id(span.get("traceId"), 16),
                    "spanId": hex_id(span.get("spanId"), 8), "parentSpanId": hex_id(span.get("parentSpanId"), 8),
                    "name": span.get("name", ""), "startNs": int(span.get("startTimeUnixNano", 0)),
                    "endNs": int(span.get("endTimeUnixNano", 0)),
                }


def serve(port, path):
    # A process started by a test inherits the test thread's signal mask (SIGTERM blocked) and may inherit SIGTERM as
    # ignored: unblock it and stop on it explicitly, or `TraceCollector.stop()` leaves the collector running (the test
    # command's leftovers check found one alive after a full run).
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    lock = threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            try:
                spans = list(spans_of(json.loads(body)))
            except (ValueError, KeyError, TypeError) as error:
                self.send_response(400)
                self.end_headers()
                self.wfile.write(str(error).encode())
                return
            with lock, open(path, "a") as file:
                for span in spans:
                    file.write(json.dumps(span) + "\n")
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, *arguments):
            pass

    open(path, "a").close()
    http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()


def show(path, name=None):
    with open(path) as file:
        spans = [json.loads(line) for line in file if line.strip()]
    traces = {}
    for span in spans:
        traces.setdefault(span["traceId"], []).append(span)
    candidates = [t for t in traces.values() if name is None or any(s["name"] == name for s in t)]
    if not candidates:
        print("no trace collected")
        return 1
    trace = max(candidates, key=lambda t: (len({s["service"] for s in t}), len(t)))
    trace.sort(key=lambda s: s["startNs"])
    start = trace[0]["startNs"]
    print(f"trace {trace[0]['traceId']}: {len(trace)} spans in {len({s['service'] for s in trace})} services")
    for span in trace:
        print(f"  +{(span['startNs'] - start) / 1e6:8.1f} ms  {span['service']:<20} {span['name']:<28} "
              f"{(span['endNs'] - span['startNs']) / 1e6:8.2f} ms")
    return 0


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        serve(int(sys.argv[2]), sys.argv[3])
    elif sys.argv[1] == "show":
        sys.exit(show(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None))
    else:
        sys.exit("usage: trace-collector.py serve PORT FILE | show FILE [NAME]")
