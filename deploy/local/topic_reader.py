"""Reads a whole topic up to its current end (high watermarks), for the local run's scripts."""
import time
import uuid

from confluent_kafka import Consumer, TopicPartition


def read_topic(bootstrap, topic, timeout=30.0):
    """Every message of `topic` at the moment of the call, partition by partition, in offset order."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"read-{uuid.uuid4()}",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False,
                         "session.timeout.ms": 6000})
    try:
        metadata = consumer.list_topics(topic, timeout=10)
        partitions = sorted(metadata.topics[topic].partitions) if topic in metadata.topics else []
        ends = {}
        for partition in partitions:
            low, high = consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=10)
            if high > low:
                ends[partition] = high
        if not ends:
            return []
        consumer.assign([TopicPartition(topic, p, 0) for p in ends])
        messages, deadline = [], time.time() + timeout
        position = {p: -1 for p in ends}
        while any(position[p] + 1 < ends[p] for p in ends) and time.time() < deadline:
            message = consumer.poll(0.5)
            if message is None or message.error():
                continue
            messages.append(message)
            position[message.partition()] = message.offset()
        return sorted(messages, key=lambda m: (m.partition(), m.offset()))
    finally:
        consumer.close()
