// kafka-python 2.0.2 (Debian python3-kafka), unchanged, against a `ferry broker` process: every
// codec it has, by partition and in a group (commit, resume after the consumer restarts), and
// every admin call of its KafkaAdminClient. python/kafka_python_suite.py runs the calls and
// prints what it saw; this file holds Kafka's documented answers. 2.0.2 has no idempotence.
import { dataPathTests } from './support/data-path-tests.ts';
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { startClientBroker, type ClientBroker } from './support/client-broker.ts';
import { SuiteReport } from './support/suite-report.ts';
import { DEBIAN_PYTHON, describeClient, missingPythonModule } from './support/tools.ts';
import { configEntries, ERROR, CONFIG_SOURCE } from './support/kafka-semantics.ts';

setDefaultTimeout(60_000);

const SUITE = `${import.meta.dir}/python/kafka_python_suite.py`;
/** The whole suite takes a few seconds on a working broker; a stalled call gives up after its request timeout. */
const SUITE_TIMEOUT_MS = 120_000;
const missing = missingPythonModule('kafka', 'python3-kafka python3-snappy python3-lz4 python3-zstandard');

let broker: ClientBroker;
let report: SuiteReport;

describeClient('kafka-python', missing)('kafka-python 2.0.2 against a Ferry broker', () => {
  beforeAll(async () => {
    broker = await startClientBroker('kafka-python');
    report = await SuiteReport.run([DEBIAN_PYTHON, SUITE, broker.bootstrap], { timeoutMs: SUITE_TIMEOUT_MS });
  }, SUITE_TIMEOUT_MS + 30_000);

  afterAll(async () => {
    if (report !== undefined) console.log(report.summary('kafka-python'));
    await broker?.stop();
  });

  dataPathTests(() => report, { idempotent: false });

  test('create_topics creates topics with their partition counts; again, TopicAlreadyExistsError', () => {
    const { topics, described } = report.data<{ topics: string[]; described: { topic: string; partitions: unknown[] }[] }>('admin.create_topics');
    expect(topics).toContain('kp-admin');
    expect(topics).toContain('kp-configured');
    expect(described[0]!.partitions.length).toBe(3);
    expect(report.data<{ error: string | null }>('admin.create_topics.existing').error).toBe('TopicAlreadyExistsError');
  });

  test('describe_configs: a config given at creation reads back with source TOPIC_CONFIG, others as defaults', () => {
    const { responses } = report.data<{ responses: { resources: { error_code: number; config_entries: unknown[] }[] }[] }>('admin.describe_configs');
    const resource = responses[0]!.resources[0]!;
    expect(resource.error_code).toBe(ERROR.NONE);
    const entries = configEntries(resource.config_entries);
    expect(entries.get('retention.ms')).toMatchObject({ value: '3600000', source: CONFIG_SOURCE.TOPIC_CONFIG, readOnly: false });
    expect(entries.get('cleanup.policy')).toMatchObject({ value: 'delete', source: CONFIG_SOURCE.DEFAULT_CONFIG });
  });

  test('alter_configs sets a topic config that describe_configs then reads back', () => {
    const { response, after } = report.data<{ response: { resources: { error_code: number }[] }; after: { resources: { config_entries: unknown[] }[] }[] }>('admin.alter_configs');
    expect(response.resources.map((r) => r.error_code)).toEqual([ERROR.NONE]);
    expect(configEntries(after[0]!.resources[0]!.config_entries).get('retention.ms')).toMatchObject({ value: '7200000', source: CONFIG_SOURCE.TOPIC_CONFIG });
  });

  test('create_partitions grows a topic to the total asked for', () => {
    const { response, described } = report.data<{ response: { topic_errors: { error_code: number }[] }; described: { partitions: unknown[] }[] }>('admin.create_partitions');
    expect(response.topic_errors.map((t) => t.error_code)).toEqual([ERROR.NONE]);
    expect(described[0]!.partitions.length).toBe(5);
  });

  test('describe_cluster names the broker and the controller', () => {
    const { cluster } = report.data<{ cluster: { brokers: { node_id: number; host: string; port: number }[]; controller_id: number; cluster_id: string | null } }>('admin.describe_cluster');
    expect(cluster.brokers).toEqual([expect.objectContaining({ node_id: 1, host: '127.0.0.1', port: broker.process.port })]);
    expect(cluster.controller_id).toBe(1);
    expect(cluster.cluster_id).toBeString();
  });

  test('list_consumer_groups lists the group with protocol type consumer', () => {
    expect(report.data<{ groups: [string, string][] }>('admin.list_consumer_groups').groups).toContainEqual(['kp-readers', 'consumer']);
  });

  test('describe_consumer_groups: the group is Empty (its members left), protocol type consumer', () => {
    const { groups } = report.data<{ groups: { group: string; state: string; protocol_type: string; members: unknown[]; error_code: number }[] }>('admin.describe_consumer_groups');
    expect(groups[0]).toMatchObject({ error_code: ERROR.NONE, group: 'kp-readers', state: 'Empty', protocol_type: 'consumer', members: [] });
  });

  test('list_consumer_group_offsets reads the committed offset', () => {
    expect(report.data<{ offsets: Record<string, number> }>('admin.list_consumer_group_offsets').offsets).toEqual({ 'kp-group:0': 15 });
  });

  test('delete_consumer_groups deletes an empty group, which then is not listed', () => {
    const { results, groups_after } = report.data<{ results: [string, string][]; groups_after: [string, string][] }>('admin.delete_consumer_groups');
    expect(results).toEqual([['kp-readers', 'NoError']]);
    expect(groups_after.map(([group]) => group)).not.toContain('kp-readers');
  });

  test('delete_topics deletes a topic, which then is not listed', () => {
    const { response, topics } = report.data<{ response: { topic_error_codes: { error_code: number }[] }; topics: string[] }>('admin.delete_topics');
    expect(response.topic_error_codes.map((t) => t.error_code)).toEqual([ERROR.NONE]);
    expect(topics).not.toContain('kp-admin');
  });
});
