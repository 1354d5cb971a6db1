"""kafka-python 2.0.2 (Debian python3-kafka) against a Ferry broker: every operation once.

Run with Debian's interpreter: /usr/bin/python3 kafka_python_suite.py HOST:PORT
Prints one JSON line per operation (test/clients/support/suite-report.ts reads them); the test
file asserts Kafka's semantics on each line's data. kafka-python 2.0.2 has no idempotent or
transactional producer, so neither is exercised here.
"""
import sys
import time

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import ConfigResource, ConfigResourceType, NewPartitions, NewTopic

from suite_report import operation, plain

BOOTSTRAP = sys.argv[1]
# Every blocking call gives up after this long, so one missing API cannot stall the suite.
REQUEST_TIMEOUT_MS = 10_000
# How long a consumer polls for the messages it expects before reporting what it got.
CONSUME_DEADLINE_S = 15
MESSAGES_PER_TOPIC = 30
CODECS = ['none', 'gzip', 'snappy', 'lz4', 'zstd']
GROUP = 'kp-readers'
GROUP_TOPIC = 'kp-group'
CONFIGURED_TOPIC = 'kp-configured'
ADMIN_TOPIC = 'kp-admin'
RETENTION_MS = '3600000'
ALTERED_RETENTION_MS = '7200000'

COMMON = dict(bootstrap_servers=BOOTSTRAP, request_timeout_ms=REQUEST_TIMEOUT_MS)


def consume_partition(topic, partition, start, count):
    """[offset, value] pairs read from `start` by partition assignment (no group)."""
    consumer = KafkaConsumer(**COMMON, enable_auto_commit=False, consumer_timeout_ms=1000)
    tp = TopicPartition(topic, partition)
    consumer.assign([tp])
    consumer.seek(tp, start)
    got = []
    deadline = time.time() + CONSUME_DEADLINE_S
    while len(got) < count and time.time() < deadline:
        for records in consumer.poll(timeout_ms=500).values():
            got.extend([r.offset, r.value.decode()] for r in records)
    consumer.close()
    return got


def produce(topic, values, **options):
    producer = KafkaProducer(**COMMON, acks='all', linger_ms=5, **options)
    futures = [producer.send(topic, value=v.encode(), partition=0) for v in values]
    producer.flush(timeout=REQUEST_TIMEOUT_MS / 1000)
    offsets = [f.get(timeout=REQUEST_TIMEOUT_MS / 1000).offset for f in futures]
    producer.close()
    return offsets


def values_of(name, count):
    return ['%s message %d %s' % (name, i, 'x' * (i * 7)) for i in range(count)]


for codec in CODECS:
    with operation('produce.' + codec) as report:
        topic = 'kp-' + codec
        values = values_of(codec, MESSAGES_PER_TOPIC)
        offsets = produce(topic, values, compression_type=None if codec == 'none' else codec)
        report(offsets=offsets, consumed=consume_partition(topic, 0, 0, len(values)), sent=values)

with operation('consume.partition') as report:
    report(consumed=consume_partition('kp-none', 0, 10, MESSAGES_PER_TOPIC - 10))


def read_group(expected):
    """Values a group member reads (up to `expected`), committed before it leaves."""
    consumer = KafkaConsumer(GROUP_TOPIC, **COMMON, group_id=GROUP, auto_offset_reset='earliest',
                             enable_auto_commit=False, session_timeout_ms=6000, heartbeat_interval_ms=1000)
    got = []
    deadline = time.time() + CONSUME_DEADLINE_S
    while len(got) < expected and time.time() < deadline:
        for records in consumer.poll(timeout_ms=500).values():
            got.extend(r.value.decode() for r in records)
    consumer.commit()
    committed = consumer.committed(TopicPartition(GROUP_TOPIC, 0))
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

admin = None
with operation('admin.connect') as report:
    admin = KafkaAdminClient(**COMMON)
    report(versions={str(k): v for k, v in admin._client.get_api_versions().items()})


def describe_topic_configs(topic):
    responses = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)])
    return [plain(r) for r in responses]


with operation('admin.create_topics') as report:
    response = admin.create_topics([
        NewTopic(ADMIN_TOPIC, num_partitions=3, replication_factor=1),
        NewTopic(CONFIGURED_TOPIC, num_partitions=1, replication_factor=1, topic_configs={'retention.ms': RETENTION_MS}),
    ], timeout_ms=REQUEST_TIMEOUT_MS)
    report(response=plain(response), topics=sorted(admin.list_topics()), described=plain(admin.describe_topics([ADMIN_TOPIC])))

with operation('admin.create_topics.existing') as report:
    # kafka-python raises the topic's error code as an exception: TopicAlreadyExistsError (36) is the answer wanted.
    try:
        admin.create_topics([NewTopic(ADMIN_TOPIC, num_partitions=3, replication_factor=1)], timeout_ms=REQUEST_TIMEOUT_MS)
        report(error=None)
    except Exception as error:
        report(error=type(error).__name__)

with operation('admin.describe_configs') as report:
    report(responses=describe_topic_configs(CONFIGURED_TOPIC))

with operation('admin.alter_configs') as report:
    response = admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, CONFIGURED_TOPIC, configs={'retention.ms': ALTERED_RETENTION_MS})])
    report(response=plain(response), after=describe_topic_configs(CONFIGURED_TOPIC))

with operation('admin.create_partitions') as report:
    response = admin.create_partitions({ADMIN_TOPIC: NewPartitions(total_count=5)}, timeout_ms=REQUEST_TIMEOUT_MS)
    report(response=plain(response), described=plain(admin.describe_topics([ADMIN_TOPIC])))

with operation('admin.describe_cluster') as report:
    report(cluster=plain(admin.describe_cluster()))

with operation('admin.list_consumer_groups') as report:
    report(groups=plain(admin.list_consumer_groups()))

with operation('admin.describe_consumer_groups') as report:
    report(groups=plain(admin.describe_consumer_groups([GROUP])))

with operation('admin.list_consumer_group_offsets') as report:
    offsets = admin.list_consumer_group_offsets(GROUP)
    report(offsets={'%s:%d' % (tp.topic, tp.partition): om.offset for tp, om in offsets.items()})

with operation('admin.delete_consumer_groups') as report:
    results = admin.delete_consumer_groups([GROUP])
    report(results=[[group, error.__name__ if isinstance(error, type) else type(error).__name__] for group, error in results],
           groups_after=plain(admin.list_consumer_groups()))

with operation('admin.delete_topics') as report:
    response = admin.delete_topics([ADMIN_TOPIC], timeout_ms=REQUEST_TIMEOUT_MS)
    report(response=plain(response), topics=sorted(admin.list_topics()))

if admin is not None:
    admin.close()
