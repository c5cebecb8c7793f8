"""A webhook receiver for the tests: verifies every delivery with the `standardwebhooks` package from PyPI and misbehaves
on purpose.

Usage: webhook_receiver.py PORT SECRETS.json LOG.jsonl [--fail-share 0.3] [--slow-share 0.05] [--slow-seconds 3]
       [--seed N]

SECRETS.json maps a path (`/ok`) to the secrets (`whsec_…`) a delivery to it may be signed with; it is read again on
every request, so the test writes it after registering. Each POST is verified with every secret of its path (a
delivery must verify with at least one, or it is answered 400); its optional key "retired" maps a path to the secrets it
no longer accepts (dropped after a rotation), so that a refused delivery signed with one of them is logged as such
rather than as forged. Then, on `/ok`, a share is answered 500, a share after `--slow-seconds` (longer
than the dispatcher waits), and the rest 200; `/gone` always answers 410. Every request is one JSON line in LOG:
{"path", "id", "verified", "retired" (refused, but signed with a retired secret), "signatures" (how many the delivery
carried), "answer" (the status, or "slow"), "body"}.
"""
import json
import random
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks.webhooks import Webhook, WebhookVerificationError

port, secrets_path, log_path = int(sys.argv[1]), sys.argv[2], sys.argv[3]
options = dict(zip(sys.argv[4::2], sys.argv[5::2]))
fail_share = float(options.get("--fail-share", 0.3))
slow_share = float(options.get("--slow-share", 0.05))
slow_seconds = float(options.get("--slow-seconds", 3))
chance = random.Random(int(options.get("--seed", 7)))
lock = threading.Lock()
log = open(log_path, "a", buffering=1)


def secrets_of(path):
    """The secrets the path accepts, and those it retired."""
    try:
        secrets = json.load(open(secrets_path))
    except (OSError, ValueError):
        secrets = {}
    return secrets.get(path, []), secrets.get("retired", {}).get(path, [])


def verifies(secrets, body, headers):
    """Whether the delivery verifies with one of `secrets`."""
    for secret in secrets:
        try:
            Webhook(secret).verify(body, headers, json_parse=False)
            return True
        except WebhookVerificationError:
            continue
    return False


class Receiver(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # The answer leaves in one segment: written unbuffered, headers and body would wait on the peer's delayed ACK
    # (40 ms a request on Linux).
    wbufsize = -1
    disable_nagle_algorithm = True

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", 0))).decode()
        headers = {name.lower(): value for name, value in self.headers.items()}
        accepted, retired = secrets_of(self.path)
        ok = verifies(accepted, body, headers)
        signed_with_retired = not ok and verifies(retired, body, headers)
        with lock:
            draw = chance.random()
        if not ok:
            answer = 400
        elif self.path == "/gone":
            answer = 410
        elif draw < fail_share:
            answer = 500
        elif draw < fail_share + slow_share:
            answer = "slow"
        else:
            answer = 200
        with lock:
            log.write(json.dumps({"path": self.path, "id": headers.get("webhook-id"), "verified": ok,
                                  "retired": signed_with_retired, "signatures": len(headers.get("webhook-signature", "").split()),
                                  "answer": answer, "body": body}) + "\n")
        if answer == "slow":
            time.sleep(slow_seconds)
            answer = 200
        try:
            self.send_response(answer)
            self.send_header("content-length", "2")
            self.end_headers()
            self.wfile.write(b"ok")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass  # a slow answer: the dispatcher stopped waiting

    def log_message(self, *args):
        pass


ThreadingHTTPServer.daemon_threads = True
server = ThreadingHTTPServer(("127.0.0.1", port), Receiver)
print("listening", flush=True)
server.serve_forever()
