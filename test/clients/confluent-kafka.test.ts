// confluent-kafka-python 1.7.0 (Debian python3-confluent-kafka over Debian's librdkafka),
// unchanged, against a `ferry broker` process: idempotent producers with every codec, by
// partition and in a group (commit, resume after the consumer restarts), every AdminClient call
// 1.7.0 has, and a transactional producer, which must be refused fast (Ferry has no transactions).
// python/confluent_kafka_suite.py runs the calls; this file holds Kafka's documented answers.
import { dataPathTests } from './support/data-path-tests.ts';
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { startClientBroker, type ClientBroker } from './support/client-broker.ts';
import { CONFIG_SOURCE, configEntries, TRANSACTIONS_REFUSED_MS_MAX } from './support/kafka-semantics.ts';
import { SuiteReport } from './support/suite-report.ts';
import { DEBIAN_PYTHON, describeClient, missingPythonModule } from './support/tools.ts';

setDefaultTimeout(60_000);

const SUITE = `${import.meta.dir}/python/confluent_kafka_suite.py`;
/** A few seconds on a working broker; init_transactions alone may wait 15 s on one that ignores it. */
const SUITE_TIMEOUT_MS = 120_000;
const missing = missingPythonModule('confluent_kafka', 'python3-confluent-kafka');

let broker: ClientBroker;
let report: SuiteReport;

interface Entry {
  name: string;
  value: string;
  source: number;
  readOnly: boolean;
  isDefault: boolean;
}

describeClient('confluent-kafka', missing)('confluent-kafka-python 1.7.0 against a Ferry broker', () => {
  beforeAll(async () => {
    broker = await startClientBroker('confluent-kafka');
    report = await SuiteReport.run([DEBIAN_PYTHON, SUITE, broker.bootstrap], { timeoutMs: SUITE_TIMEOUT_MS });
  }, SUITE_TIMEOUT_MS + 30_000);

  afterAll(async () => {
    if (report !== undefined) console.log(report.summary('confluent-kafka'));
    await broker?.stop();
  });

  dataPathTests(() => report, { idempotent: true });

  test('init_transactions fails within a few seconds with an error (Ferry has no transactions), not a timeout', () => {
    const failure = report.failure('transactions.init');
    expect(failure.ms).toBeLessThan(TRANSACTIONS_REFUSED_MS_MAX);
    expect(failure.error).not.toContain('_TIMED_OUT');
    expect(failure.error).toContain('TRANSACTIONAL_ID_AUTHORIZATION_FAILED'); // fatal in librdkafka: no retries
  });

  test('create_topics creates topics with their partition counts; again, TOPIC_ALREADY_EXISTS', () => {
    const { created, again, partitions } = report.data<{ created: Record<string, string | null>; again: Record<string, string | null>; partitions: number }>('admin.create_topics');
    expect(created).toEqual({ 'ck-admin': null, 'ck-configured': null });
    expect(again['ck-admin']).toStartWith('TOPIC_ALREADY_EXISTS');
    expect(partitions).toBe(3);
  });

  test('describe_configs: a config given at creation reads back with source TOPIC_CONFIG, others as defaults', () => {
    const entries = configEntries(report.data<{ entries: Entry[] }>('admin.describe_configs').entries);
    expect(entries.get('retention.ms')).toMatchObject({ value: '3600000', source: CONFIG_SOURCE.TOPIC_CONFIG, readOnly: false });
    expect(entries.get('cleanup.policy')).toMatchObject({ value: 'delete', source: CONFIG_SOURCE.DEFAULT_CONFIG });
  });

  test('alter_configs sets a topic config that describe_configs then reads back', () => {
    const { altered, after } = report.data<{ altered: Record<string, string | null>; after: Entry[] }>('admin.alter_configs');
    expect(Object.values(altered)).toEqual([null]);
    expect(configEntries(after).get('retention.ms')).toMatchObject({ value: '7200000', source: CONFIG_SOURCE.TOPIC_CONFIG });
  });

  test('create_partitions grows a topic to the total asked for; fewer than it has is INVALID_PARTITIONS', () => {
    const { grown, shrunk, partitions } = report.data<{ grown: Record<string, string | null>; shrunk: Record<string, string | null>; partitions: number }>('admin.create_partitions');
    expect(grown).toEqual({ 'ck-admin': null });
    expect(shrunk['ck-admin']).toStartWith('INVALID_PARTITIONS');
    expect(partitions).toBe(5);
  });

  test('list_topics names the topics, the broker, the controller and the cluster id', () => {
    const { topics, brokers, controller_id, cluster_id } = report.data<{ topics: string[]; brokers: Record<string, [string, number]>; controller_id: number; cluster_id: string }>('admin.list_topics');
    expect(topics).toContain('ck-admin');
    expect(brokers).toEqual({ 1: ['127.0.0.1', broker.process.port] });
    expect(controller_id).toBe(1);
    expect(cluster_id).toBeString();
  });

  test('list_groups lists the group, Empty once its members left, protocol type consumer', () => {
    const { groups } = report.data<{ groups: { id: string; state: string; protocol_type: string; members: number; error: string | null }[] }>('admin.list_groups');
    expect(groups).toContainEqual({ id: 'ck-readers', state: 'Empty', protocol_type: 'consumer', members: 0, error: null });
  });

  test('delete_topics deletes a topic, which then is not listed', () => {
    const { deleted, topics } = report.data<{ deleted: Record<string, string | null>; topics: string[] }>('admin.delete_topics');
    expect(deleted).toEqual({ 'ck-admin': null });
    expect(topics).not.toContain('ck-admin');
  });
});
