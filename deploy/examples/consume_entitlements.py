"""A downstream consumer of the pipeline's events that a team can copy (Python, confluent-kafka).

    pip install confluent-kafka
    python consume_entitlements.py --bootstrap 127.0.0.1:9092 --group my-team [--environment Production] [--max-seconds 30]

What it shows:
- deduplicate on `eventId` (delivery is at-least-once; a retry carries the same id);
- keep environments apart (`environment` is on every event and in the key `environment/bundleId/customer`);
- ignore fields and event types it does not know (new ones come without a schemaVersion change);
- `outOfOrder: true` marks a new fact about an older state: record it, do not roll state back;
- commit offsets only after the event is handled.
It prints one line per event it handled and a closing count; a real consumer would write to its own store.
"""
import argparse
import json
import sys
import time

from confluent_kafka import Consumer

TOPICS = ["entitlements.changes", "entitlements.family", "entitlements.revocations"]


def handle(event, seen):
    """Handles one event once; returns a line describing it, or None for a repeat."""
    if event["eventId"] in seen:
        return None
    seen.add(event["eventId"])
    kind = event["eventType"]
    who = f"{event['environment']}/{event['bundleId']}/{event['customer']}"
    if kind.startswith("entitlement.") and not event.get("outOfOrder"):
        state = event.get("state") or {}
        return f"{who} {event.get('entitlementId', event['productId'])}: {kind} active={state.get('active')} until={state.get('validUntil')}"
    if kind == "consumption.requested":
        return f"{who} answer consumption request for {event['revocation']['transactionId']} before {event['responseDeadline']}"
    if kind.startswith("revocation.") or kind.startswith("consumable."):
        return f"{who} {kind} {event['revocation']['transactionId']}" + (" (late)" if event.get("outOfOrder") else "")
    return f"{who} {kind}" + (" (late)" if event.get("outOfOrder") else "")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bootstrap", default="127.0.0.1:9092")
    parser.add_argument("--group", default="example-consumer")
    parser.add_argument("--environment", help="only this environment (Production, Sandbox)")
    parser.add_argument("--max-seconds", type=float, default=0,
                        help="stop after this long without a new event, once events came (at most 60 s for the first; 0: run until Ctrl-C)")
    args = parser.parse_args()
    consumer = Consumer({"bootstrap.servers": args.bootstrap, "group.id": args.group, "auto.offset.reset": "earliest",
                         "enable.auto.commit": False, "session.timeout.ms": 6000, "heartbeat.interval.ms": 500})
    consumer.subscribe(TOPICS)
    seen, handled, started, last = set(), 0, time.time(), None

    def waiting():
        if not args.max_seconds:
            return True
        return time.time() - started < 60 if last is None else time.time() - last < args.max_seconds

    try:
        while waiting():
            message = consumer.poll(0.5)
            if message is None or message.error():
                continue
            event = json.loads(message.value())
            if args.environment is None or event.get("environment") == args.environment:
                line = handle(event, seen)
                if line:
                    print(line)
                    handled += 1
            consumer.commit(message=message, asynchronous=False)
            last = time.time()
    except KeyboardInterrupt:
        pass
    finally:
        consumer.close()
    print(f"{handled} events handled, {len(seen)} distinct event ids")
    return 0


if __name__ == "__main__":
    sys.exit(main())
