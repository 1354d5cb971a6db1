"""confluent-kafka-python 1.7.0 (librdkafka 2.0.2) over SASL_SSL with OAUTHBEARER tokens given by
oauth_cb: a signed JWT produces, consumes and reads metadata; each refused token tries to write
and reports what librdkafka said.

Run with Debian's interpreter:
    /usr/bin/python3 oauth_cb_suite.py BOOTSTRAP CA_PATH TOPIC GUARDED_TOPIC TOKENS_JSON
TOKENS_JSON: {"good": "<jwt>", "<refusal name>": "<jwt>", ...}. Prints one JSON line per
operation (test/clients/support/suite-report.ts reads them).
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'python'))

from confluent_kafka import Consumer, Producer, TopicPartition  # noqa: E402

from suite_report import operation  # noqa: E402

BOOTSTRAP, CA_PATH, TOPIC, GUARDED = sys.argv[1:5]
TOKENS = json.loads(sys.argv[5])
# Every wait gives up after this long, so a broker that never answers cannot stall the suite.
DEADLINE_S = 10
# A token's lifetime as told to librdkafka (it refreshes at 80% of it; the suite is done well before).
TOKEN_LIFETIME_S = 3600
VALUES = ['oauth_cb one', 'oauth_cb two']


def config(token, errors):
    def oauth_cb(_oauthbearer_config):
        return token, time.time() + TOKEN_LIFETIME_S

    return {
        'bootstrap.servers': BOOTSTRAP,
        'security.protocol': 'SASL_SSL',
        'ssl.ca.location': CA_PATH,
        'sasl.mechanisms': 'OAUTHBEARER',
        'oauth_cb': oauth_cb,
        'error_cb': lambda error: errors.append('%s: %s' % (error.name(), error.str())),
    }


with operation('oauth.produce') as report:
    errors = []
    producer = Producer({**config(TOKENS['good'], errors), 'acks': 'all'})
    offsets = []
    for value in VALUES:
        producer.produce(TOPIC, value.encode(), partition=0, on_delivery=lambda error, message: offsets.append(str(error) if error else message.offset()))
    left = producer.flush(DEADLINE_S)
    report(offsets=offsets, undelivered=left, errors=errors)

with operation('oauth.metadata') as report:
    metadata = producer.list_topics(timeout=DEADLINE_S)
    report(brokers=['%s:%d' % (b.host, b.port) for b in metadata.brokers.values()], topics=sorted(metadata.topics))

with operation('oauth.consume') as report:
    errors = []
    consumer = Consumer({**config(TOKENS['good'], errors), 'group.id': 'oauth-cb-readers', 'enable.auto.commit': False})
    consumer.assign([TopicPartition(TOPIC, 0, 0)])
    values = []
    deadline = time.monotonic() + DEADLINE_S
    while len(values) < len(VALUES) and time.monotonic() < deadline:
        message = consumer.poll(0.2)
        if message is not None and message.error() is None:
            values.append(message.value().decode())
    consumer.close()
    report(values=values, errors=errors)

for name, token in TOKENS.items():
    if name == 'good':
        continue
    with operation('refused.' + name) as report:
        errors = []
        producer = Producer({**config(token, errors), 'acks': 'all', 'message.timeout.ms': DEADLINE_S * 1000})
        delivered = []
        producer.produce(GUARDED, ('intruder: python ' + name).encode(), partition=0, on_delivery=lambda error, message: delivered.append(str(error) if error else message.offset()))
        deadline = time.monotonic() + DEADLINE_S
        while not errors and not delivered and time.monotonic() < deadline:
            producer.poll(0.1)
        report(errors=errors, delivered=delivered)
