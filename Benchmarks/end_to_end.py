"""Figures of one end-to-end benchmark phase, read from what the pipeline itself recorded.

Usage: end_to_end.py --database-url URL --expected expected.json --pids name=PID ... [--wait S] [--since-ms MS]
Waits until the database holds the sim's expected state and the outbox is drained, then prints one JSON
object: notifications committed, the sustained rate (first HTTP accept → last commit), latency percentiles
from HTTP accept (ingest's received-at) to entitlement committed (the updater's transaction) and to
downstream event published (the publisher's acknowledged batch: the first publication whose cursor reaches the
event), and each process's memory.
"""
import argparse
import base64
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "deploy", "local"))
from summary import has_outbox_cursor, sql, wait_until_converged  # noqa: E402
from topic_reader import read_topic  # noqa: E402

# The topics a notification passes through, keyed by its subject: where a notification the log lacks got to.
SUBJECT_TOPICS = ["appstore.notifications.raw", "appstore.notifications.verified", "appstore.notifications.rejected"]

# Committed at: the commit time of the row's transaction (track_commit_timestamp, which the benchmark turns on;
# applied_at is the transaction's start, earlier than its commit when several notifications share it). A row
# counted as a duplicate later was rewritten by that later transaction, so latency is taken over the others.
COMMITTED_AT = "extract(epoch FROM coalesce(pg_xact_commit_timestamp(xmin), applied_at)) * 1000"
COMMITTED = f"""
    SELECT count(*), (max({COMMITTED_AT}) - min(received_at)) / 1000.0,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY {COMMITTED_AT} - received_at) FILTER (WHERE duplicates = 0),
           percentile_cont(0.99) WITHIN GROUP (ORDER BY {COMMITTED_AT} - received_at) FILTER (WHERE duplicates = 0)
    FROM notification_log WHERE received_at >= {{since}} AND notification_type <> 'STATUS_SNAPSHOT'"""
PUBLISHED = """
    SELECT count(*),
           percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM p.published_at) * 1000 - n.received_at),
           percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM p.published_at) * 1000 - n.received_at)
    FROM outbox o JOIN notification_log n ON n.notification_uuid = o.payload -> 'cause' ->> 'notificationUUID'
    {publication}
    WHERE o.topic LIKE 'entitlements.%' AND n.received_at >= {since} AND n.notification_type <> 'STATUS_SNAPSHOT'"""
# When an event was published: the first relay publication that reached it (migration 13's cursor); a build before it
# (BENCHMARK_BIN) marked each row.
PUBLICATION = """CROSS JOIN LATERAL (SELECT published_at FROM outbox_publications
                        WHERE (through_xid, through_id) >= (o.writer_xid, o.id)
                        ORDER BY through_xid, through_id LIMIT 1) p"""
PUBLICATION_BEFORE_CURSOR = "CROSS JOIN LATERAL (SELECT o.published_at) p"
# Accept → committed over the phase, second by second (stderr): shows whether a tail is a stall or a start-up.
BY_SECOND = f"""
    WITH l AS (SELECT received_at, {COMMITTED_AT} - received_at AS ms FROM notification_log
               WHERE received_at >= {{since}} AND notification_type <> 'STATUS_SNAPSHOT' AND duplicates = 0)
    SELECT floor((received_at - (SELECT min(received_at) FROM l)) / 1000)::int AS second, count(*),
           round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric), round(max(ms)::numeric)
    FROM l GROUP BY 1 ORDER BY 1"""


def memory(pid):
    """(current RSS, peak RSS) in MiB of a running process."""
    values = {}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            key, _, rest = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                values[key] = int(rest.split()[0]) / 1024
    return round(values.get("VmRSS", 0)), round(values.get("VmHWM", 0))


def describe(topic, value):
    """`TYPE uuid` of a notification record of one of SUBJECT_TOPICS (the raw topic holds Apple's body)."""
    try:
        record = json.loads(value)
        if "signedPayload" in record:
            part = record["signedPayload"].split(".")[1]
            record = {"notification": {"payload": json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))}}
        payload = record.get("notification", {}).get("payload") or record.get("original", {})
        return f"{payload.get('notificationType', record.get('reason', '?'))} {payload.get('notificationUUID', '')}"
    except (ValueError, KeyError, IndexError, AttributeError):
        return f"{len(value or b'')} bytes"


def explain_difference(database_url, expected, missing, extra, bootstrap=None):
    """Prints what differs from the sim's expectation and, for each differing customer's purchases, every notification
    the updater logged and (with `bootstrap`) every record of it in the raw, verified and rejected topics, so a lost,
    stuck or misapplied notification can be told apart from the run's log."""
    customers = {entry[1] for entry in missing | extra}
    for entry in sorted(missing):
        print(f"expected, not stored: {entry}", file=sys.stderr)
    for entry in sorted(extra):
        print(f"stored, not expected: {entry}", file=sys.stderr)
    subjects = sorted({e["originalTransactionId"] for e in expected if e["customer"] in customers and
                       e.get("originalTransactionId")})
    query = ("SELECT environment, notification_type, coalesce(subtype, ''), signed_date, outcome, coalesce(detail, '') "
             "FROM notification_log WHERE subject = :'subject' ORDER BY signed_date")
    for subject in subjects:
        # psql binds the variable itself (quoted as a literal), so the subject is never spliced into the SQL text.
        out = subprocess.run(["psql", database_url, "-At", "-F", " | ", "-v", f"subject={subject}"], input=query,
                             check=True, capture_output=True, text=True).stdout
        print(f"notification_log of {subject}:", file=sys.stderr)
        for line in out.splitlines():
            print("  " + line, file=sys.stderr)
    if bootstrap is None:
        return
    keys = {subject.encode() for subject in subjects}
    for topic in SUBJECT_TOPICS:
        for message in read_topic(bootstrap, topic):
            if message.key() in keys:
                print(f"{topic} [p{message.partition()}@{message.offset()} key={message.key().decode()}] "
                      f"{describe(topic, message.value())}", file=sys.stderr)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--expected", required=True)
    parser.add_argument("--pids", nargs="*", default=[])
    parser.add_argument("--bootstrap", help="the broker: when the state differs, where each differing subject's "
                        "notifications are in its topics")
    parser.add_argument("--wait", type=float, default=600)
    parser.add_argument("--since-ms", type=int, default=0,
                        help="count only notifications accepted from then on (epoch ms): not the warm-up notification")
    args = parser.parse_args()
    expected = json.load(open(args.expected))
    missing, extra = wait_until_converged(args.database_url, expected, args.wait)
    if missing or extra:
        explain_difference(args.database_url, expected, missing, extra, args.bootstrap)
    count, seconds, p50, p99 = sql(args.database_url, COMMITTED.format(since=args.since_ms))[0]
    publication = PUBLICATION if has_outbox_cursor(args.database_url) else PUBLICATION_BEFORE_CURSOR
    events, e50, e99 = sql(args.database_url, PUBLISHED.format(since=args.since_ms, publication=publication))[0]
    for second, n, median, worst in sql(args.database_url, BY_SECOND.format(since=args.since_ms)):
        print(f"second {second}: {n} accepted, committed p50 {median} ms, max {worst} ms", file=sys.stderr)
    result = {
        "converged": not missing and not extra,
        "notifications": int(count), "seconds": float(seconds), "rate": int(count) / float(seconds),
        "committed_p50_ms": float(p50), "committed_p99_ms": float(p99),
        "events": int(events), "published_p50_ms": float(e50 or 0), "published_p99_ms": float(e99 or 0),
        "memory_mib": {name: memory(pid) for name, pid in (p.split("=") for p in args.pids)},
    }
    print(json.dumps(result))
    return 0 if result["converged"] else 1


if __name__ == "__main__":
    sys.exit(main())
