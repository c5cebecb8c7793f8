#!/usr/bin/env python3
"""Checks a benchmark's baseline against what the server holds, before the baseline becomes a figure.

    plausible.py broker-holds BOOTSTRAP COUNT WHAT TOPIC...
        exits 1 ("implausible baseline: ...") unless the broker's TOPICs hold at least COUNT messages (the sum of
        every partition's high watermark, as a fetch reports it): a produce baseline that counted acknowledgements the broker
        never stored would otherwise be printed as the limit the pipeline is compared with.

Run with deploy/local/env.sh's APPSTORE_TOOLS_PYTHON (confluent-kafka).
"""
import sys
import time

from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition


def stored(bootstrap, topics, enough):
    """How many messages the topics hold now, counted until `enough` are found (or every partition is counted).

    Counted from the high watermark a fetch carries: Tansu answers a ListOffsets query (librdkafka's
    `query_watermark_offsets`) with 1 for a partition holding hundreds of messages, while its fetch responses carry
    the true high watermark. One small fetch per partition, until the count reaches `enough` or every partition has
    answered; a partition that gives nothing within 30 s holds nothing. (It was a 3 s window with no new partition:
    with 100,588 zstd-compressed records stored, 2 of 4 partitions answered in that time, and a plausible baseline
    was refused.)
    """
    consumer = Consumer({
        "bootstrap.servers": bootstrap, "group.id": "plausible", "enable.auto.commit": False,
        "max.partition.fetch.bytes": 1024,
    })
    try:
        metadata = consumer.list_topics(timeout=10)
        partitions = []
        for topic in topics:
            if topic not in metadata.topics:
                raise SystemExit(f"implausible baseline: topic {topic} does not exist")
            partitions += [TopicPartition(topic, p, OFFSET_BEGINNING) for p in metadata.topics[topic].partitions]
        consumer.assign(partitions)
        seen, total, deadline = set(), 0, time.monotonic() + 30
        while len(seen) < len(partitions) and total < enough and time.monotonic() < deadline:
            message = consumer.poll(0.2)
            if message is None or message.error() or (message.topic(), message.partition()) in seen:
                continue
            seen.add((message.topic(), message.partition()))
            low, high = consumer.get_watermark_offsets(
                TopicPartition(message.topic(), message.partition()), cached=True)
            total += high - max(low, 0)
        return total
    finally:
        consumer.close()


def main(arguments):
    if len(arguments) >= 5 and arguments[0] == "broker-holds":
        bootstrap, count, what, topics = arguments[1], int(arguments[2]), arguments[3], arguments[4:]
        holds = stored(bootstrap, topics, count)
        if holds < count:
            raise SystemExit(
                f"implausible baseline: {what} counted {count} messages acknowledged, the broker holds {holds} "
                f"in {', '.join(topics)}")
        return
    raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
