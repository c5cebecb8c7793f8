"""Prints what the pipeline's topics hold: one line per message (used by deploy/local/run.sh).

Usage: show-topics.py BOOTSTRAP TOPIC [TOPIC...]; reads each topic from the beginning to its current end.
"""
import json
import sys

from topic_reader import read_topic


def summary(topic, value):
    """One line describing a message of a pipeline topic."""
    if value is None:
        return "(tombstone)"
    try:
        record = json.loads(value)
    except ValueError:
        return f"{len(value)} bytes"
    if "notification" in record:
        n = record["notification"]
        t = n.get("transaction") or {}
        return (f'{n["payload"].get("notificationType")} {n["payload"].get("notificationUUID")} '
                f'subject={record["subject"]} product={t.get("productId")} transaction={t.get("transactionId")}')
    if "eventType" in record:
        state = record.get("state") or {}
        return (f'{record["eventType"]} customer={record["customer"]} product={record["productId"]} '
                f'active={state.get("active")} until={state.get("validUntil")} cause={record["cause"]["notificationType"]}')
    if "reason" in record:
        return f'reason={record["reason"]}: {record["detail"][:100]}'
    if "signedPayload" in record:
        return f'Apple body, {len(value)} bytes'
    return value[:120].decode(errors="replace")


def main():
    bootstrap, topics = sys.argv[1], sys.argv[2:]
    for topic in topics:
        messages = read_topic(bootstrap, topic)
        print(f"  {topic}: {len(messages)} message(s)")
        for message in messages:
            key = message.key().decode() if message.key() else "-"
            print(f"    [p{message.partition()}@{message.offset()} key={key}] {summary(topic, message.value())}")


if __name__ == "__main__":
    main()
