// kafkajs 2.x against a `ferry broker` process, for what test/broker/kafkajs.test.ts does not
// cover: a transactional producer, which must be refused within a few seconds (Ferry has no
// transactions yet: a client must not hang or, worse, believe its writes were transactional),
// and a per-topic config given at creation, read back by DescribeConfigs.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { ConfigResourceTypes, Kafka, logLevel } from 'kafkajs';
import { startClientBroker, type ClientBroker } from './support/client-broker.ts';
import { CONFIG_SOURCE, configEntries, TRANSACTIONS_REFUSED_MS_MAX } from './support/kafka-semantics.ts';

setDefaultTimeout(30_000);

/** Past this the attempt is reported as hanging: well above TRANSACTIONS_REFUSED_MS_MAX. */
const ATTEMPT_TIMEOUT_MS = 20_000;

let broker: ClientBroker;
let kafka: Kafka;

beforeAll(async () => {
  broker = await startClientBroker('kafkajs');
  kafka = new Kafka({ clientId: 'ferry-kafkajs', brokers: [broker.bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 2 }, requestTimeout: 5000 });
});

afterAll(async () => {
  await broker?.stop();
});

/** connect, begin, send, commit: the whole of a transaction, as far as the broker lets it go. */
async function attemptTransaction(): Promise<string> {
  const producer = kafka.producer({ transactionalId: 'kafkajs-transactions', idempotent: true, maxInFlightRequests: 1 });
  try {
    await producer.connect();
    const transaction = await producer.transaction();
    await transaction.send({ topic: 'kafkajs-transactional', messages: [{ value: 'inside a transaction' }] });
    await transaction.commit();
    return 'committed';
  } catch (error) {
    return `${(error as Error).name}: ${(error as Error).message}`;
  } finally {
    await producer.disconnect().catch(() => {});
  }
}

describe('kafkajs against a Ferry broker: transactions and topic configs', () => {
  test('a transactional producer is refused within a few seconds with an error, not left hanging', async () => {
    const started = Date.now();
    let timer: Timer | undefined;
    const hang = new Promise<string>((resolve) => (timer = setTimeout(() => resolve(`no answer after ${ATTEMPT_TIMEOUT_MS} ms`), ATTEMPT_TIMEOUT_MS)));
    const outcome = await Promise.race([attemptTransaction(), hang]);
    clearTimeout(timer);
    console.log(`kafkajs transactional producer: ${outcome}`);
    expect(outcome).not.toBe('committed');
    expect(outcome).not.toContain('no answer after');
    expect(outcome).not.toMatch(/timed? ?out/i);
    expect(outcome).toContain('Transactional Id authorization failed'); // names transactions: not a broker or coordinator problem
    expect(Date.now() - started).toBeLessThan(TRANSACTIONS_REFUSED_MS_MAX);
  });

  test('a topic config given at creation reads back from DescribeConfigs with source TOPIC_CONFIG', async () => {
    const admin = kafka.admin();
    await admin.connect();
    try {
      await admin.createTopics({ topics: [{ topic: 'kafkajs-configured', numPartitions: 1, configEntries: [{ name: 'retention.ms', value: '3600000' }] }] });
      const described = await admin.describeConfigs({ resources: [{ type: ConfigResourceTypes.TOPIC, name: 'kafkajs-configured' }], includeSynonyms: false });
      const entries = configEntries(
        described.resources[0]!.configEntries.map((e) => ({ name: e.configName, value: e.configValue, source: (e as { configSource?: number }).configSource, readOnly: e.readOnly })),
      );
      expect(entries.get('retention.ms')).toMatchObject({ value: '3600000', source: CONFIG_SOURCE.TOPIC_CONFIG, readOnly: false });
    } finally {
      await admin.disconnect();
    }
  });
});
