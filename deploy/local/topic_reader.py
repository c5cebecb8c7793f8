"""Reads a whole topic up to its current end (high watermarks), for the local run's scripts."""
import time
import uuid

from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition


def read_topic(bootstrap, topic, timeout=30.0):
    """Every message of `topic` at the moment of the call, partition by partition, in offset order.

    Reads to the high watermark each fetch carries: Tansu answers a ListOffsets query (librdkafka's
    `query_watermark_offsets`) with the last batch's first offset + 1, so a partition whose last batch held ten
    messages would be read short by nine (Benchmarks/plausible.py counts the same way).
    """
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"read-{uuid.uuid4()}",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False,
                         "session.timeout.ms": 6000})
    try:
        metadata = consumer.list_topics(topic, timeout=10)
        partitions = sorted(metadata.topics[topic].partitions) if topic in metadata.topics else []
        if not partitions:
            return []
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in partitions])
        messages, deadline, quiet_since = [], time.time() + timeout, time.time()
        position = {p: -1 for p in partitions}

        def read_to_the_end():
            # Read when a fetch told each partition's end and the reader is there; while a partition's end is not
            # known yet (no fetch answered: the cached watermark is negative), once nothing came for a second.
            unknown = False
            for p in partitions:
                _, high = consumer.get_watermark_offsets(TopicPartition(topic, p), cached=True)
                if high < 0:
                    unknown = True
                elif position[p] + 1 < high:
                    return False
            return not unknown or time.time() - quiet_since >= 1.0

        while not read_to_the_end() and time.time() < deadline:
            message = consumer.poll(0.2)
            if message is None or message.error():
                continue
            messages.append(message)
            position[message.partition()] = message.offset()
            quiet_since = time.time()
        return sorted(messages, key=lambda m: (m.partition(), m.offset()))
    finally:
        consumer.close()
