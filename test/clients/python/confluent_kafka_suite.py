"""confluent-kafka-python 1.7.0 (Debian python3-confluent-kafka, librdkafka) against a Ferry broker.

Run with Debian's interpreter: /usr/bin/python3 confluent_kafka_suite.py HOST:PORT
Prints one JSON line per operation (test/clients/support/suite-report.ts reads them); the test
file asserts Kafka's semantics on each line's data.
"""
import sys
import time

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource, NewPartitions, NewTopic

from suite_report import operation

BOOTSTRAP = sys.argv[1]
# Every blocking call gives up after this long, so one missing API cannot stall the suite.
REQUEST_TIMEOUT_S = 10
# How long a consumer polls for the messages it expects before reporting what it got.
CONSUME_DEADLINE_S = 15
# init_transactions is given this long: a broker without transactions must refuse well before.
TRANSACTION_TIMEOUT_S = 15
MESSAGES_PER_TOPIC = 30
CODECS = ['none', 'gzip', 'snappy', 'lz4', 'zstd']
GROUP = 'ck-readers'
GROUP_TOPIC = 'ck-group'
CONFIGURED_TOPIC = 'ck-configured'
ADMIN_TOPIC = 'ck-admin'
RETENTION_MS = '3600000'
ALTERED_RETENTION_MS = '7200000'

COMMON = {'bootstrap.servers': BOOTSTRAP, 'socket.timeout.ms': REQUEST_TIMEOUT_S * 1000}


def produce(topic, values, **config):
    producer = Producer({**COMMON, 'acks': 'all', 'linger.ms': 5, **config})
    offsets = [None] * len(values)
    errors = []

    def delivered(index):
        def on_delivery(error, message):
            if error is not None:
                errors.append(str(error))
            else:
                offsets[index] = message.offset()
        return on_delivery

    for index, value in enumerate(values):
        producer.produce(topic, value=value.encode(), partition=0, on_delivery=delivered(index))
    left = producer.flush(REQUEST_TIMEOUT_S)
    if errors or left:
        raise KafkaException('%d undelivered, errors: %s' % (left, errors[:3]))
    return offsets


def consume_partition(topic, partition, start, count):
    """[offset, value] pairs read from `start` by partition assignment: no group membership, no commits."""
    consumer = Consumer({**COMMON, 'group.id': 'ck-by-partition', 'enable.auto.commit': False})
    consumer.assign([TopicPartition(topic, partition, start)])
    got = []
    deadline = time.time() + CONSUME_DEADLINE_S
    while len(got) < count and time.time() < deadline:
        message = consumer.poll(0.5)
        if message is None or message.error() is not None:
            continue
        got.append([message.offset(), message.value().decode()])
    consumer.close()
    return got


def values_of(name, count):
    return ['%s message %d %s' % (name, i, 'x' * (i * 7)) for i in range(count)]


for codec in CODECS:
    with operation('produce.idempotent.' + codec) as report:
        topic = 'ck-' + codec
        values = values_of(codec, MESSAGES_PER_TOPIC)
        offsets = produce(topic, values, **{'compression.type': codec, 'enable.idempotence': True})
        report(offsets=offsets, consumed=consume_partition(topic, 0, 0, len(values)), sent=values)

with operation('consume.partition') as report:
    report(consumed=consume_partition('ck-none', 0, 10, MESSAGES_PER_TOPIC - 10))


def read_group(expected):
    """Values a group member reads (up to `expected`), committed synchronously before it leaves."""
    consumer = Consumer({**COMMON, 'group.id': GROUP, 'auto.offset.reset': 'earliest', 'enable.auto.commit': False,
                         'session.timeout.ms': 6000})
    consumer.subscribe([GROUP_TOPIC])
    got = []
    deadline = time.time() + CONSUME_DEADLINE_S
    while len(got) < expected and time.time() < deadline:
        message = consumer.poll(0.5)
        if message is None or message.error() is not None:
            continue
        got.append(message.value().decode())
    consumer.commit(asynchronous=False)
    committed = consumer.committed([TopicPartition(GROUP_TOPIC, 0)], timeout=REQUEST_TIMEOUT_S)[0].offset
    consumer.close()
    return got, committed


with operation('group.consume') as report:
    produce(GROUP_TOPIC, ['first-%d' % i for i in range(10)])
    values, committed = read_group(10)
    report(values=values, committed=committed)

with operation('group.resume') as report:
    produce(GROUP_TOPIC, ['second-%d' % i for i in range(5)])
    values, committed = read_group(5)
    report(values=values, committed=committed)

with operation('transactions.init') as report:
    # Ferry has no transactions yet: init_transactions must fail fast with a clear error, not hang.
    producer = Producer({**COMMON, 'transactional.id': 'ck-transactions'})
    producer.init_transactions(TRANSACTION_TIMEOUT_S)
    report(initialised=True)

admin = AdminClient(COMMON)


def results(futures):
    """Each future's outcome: None (done) or the error's name and text."""
    outcome = {}
    for key, future in futures.items():
        try:
            future.result(REQUEST_TIMEOUT_S)
            outcome[str(key)] = None
        except KafkaException as error:
            outcome[str(key)] = '%s: %s' % (error.args[0].name(), error.args[0].str())
    return outcome


def describe_topic_configs(topic):
    futures = admin.describe_configs([ConfigResource('topic', topic)], request_timeout=REQUEST_TIMEOUT_S)
    entries = list(futures.values())[0].result(REQUEST_TIMEOUT_S)
    return [{'name': e.name, 'value': e.value, 'source': e.source, 'readOnly': e.is_read_only, 'isDefault': e.is_default}
            for e in entries.values()]


def partitions_of(topic):
    return len(admin.list_topics(topic, timeout=REQUEST_TIMEOUT_S).topics[topic].partitions)


with operation('admin.create_topics') as report:
    created = results(admin.create_topics([
        NewTopic(ADMIN_TOPIC, num_partitions=3, replication_factor=1),
        NewTopic(CONFIGURED_TOPIC, num_partitions=1, replication_factor=1, config={'retention.ms': RETENTION_MS}),
    ], request_timeout=REQUEST_TIMEOUT_S))
    again = results(admin.create_topics([NewTopic(ADMIN_TOPIC, num_partitions=3, replication_factor=1)], request_timeout=REQUEST_TIMEOUT_S))
    report(created=created, again=again, partitions=partitions_of(ADMIN_TOPIC))

with operation('admin.describe_configs') as report:
    report(entries=describe_topic_configs(CONFIGURED_TOPIC))

with operation('admin.alter_configs') as report:
    altered = results(admin.alter_configs([ConfigResource('topic', CONFIGURED_TOPIC, set_config={'retention.ms': ALTERED_RETENTION_MS})], request_timeout=REQUEST_TIMEOUT_S))
    report(altered=altered, after=describe_topic_configs(CONFIGURED_TOPIC))

with operation('admin.create_partitions') as report:
    grown = results(admin.create_partitions([NewPartitions(ADMIN_TOPIC, 5)], request_timeout=REQUEST_TIMEOUT_S))
    shrunk = results(admin.create_partitions([NewPartitions(ADMIN_TOPIC, 2)], request_timeout=REQUEST_TIMEOUT_S))
    report(grown=grown, shrunk=shrunk, partitions=partitions_of(ADMIN_TOPIC))

with operation('admin.list_topics') as report:
    cluster = admin.list_topics(timeout=REQUEST_TIMEOUT_S)
    report(topics=sorted(cluster.topics), brokers={str(b.id): [b.host, b.port] for b in cluster.brokers.values()},
           controller_id=cluster.controller_id, cluster_id=cluster.cluster_id)

with operation('admin.list_groups') as report:
    groups = admin.list_groups(timeout=REQUEST_TIMEOUT_S)
    report(groups=[{'id': g.id, 'state': g.state, 'protocol_type': g.protocol_type, 'members': len(g.members),
                    'error': None if g.error is None else str(g.error)} for g in groups])

with operation('admin.delete_topics') as report:
    deleted = results(admin.delete_topics([ADMIN_TOPIC], request_timeout=REQUEST_TIMEOUT_S))
    report(deleted=deleted, topics=sorted(admin.list_topics(timeout=REQUEST_TIMEOUT_S).topics))
