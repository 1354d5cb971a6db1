// sarama 1.22.1 (Debian golang-github-shopify-sarama-dev) at Kafka 2.2's protocol versions,
// unchanged, against a `ferry broker` process: idempotent producers with every codec, by
// partition and in a consumer group (commit, resume after the consumer restarts), and every
// ClusterAdmin call 1.22.1 has (DeleteGroups through the raw request: its admin lacks it).
// sarama/main.go runs the calls; this file holds Kafka's documented answers.
import { dataPathTests } from './support/data-path-tests.ts';
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { startClientBroker, type ClientBroker } from './support/client-broker.ts';
import { CONFIG_SOURCE, configEntries, ERROR } from './support/kafka-semantics.ts';
import { buildSaramaSuite, missingSarama } from './support/sarama-build.ts';
import { SuiteReport } from './support/suite-report.ts';
import { describeClient } from './support/tools.ts';

setDefaultTimeout(60_000);

/** A few seconds on a working broker; each operation gives up after 20 s. */
const SUITE_TIMEOUT_MS = 120_000;
const BUILD_TIMEOUT_MS = 200_000;

let broker: ClientBroker;
let report: SuiteReport;

interface Entry {
  name: string;
  value: string;
  source: number;
  readOnly: boolean;
  isDefault: boolean;
}

describeClient('sarama', missingSarama())('sarama 1.22.1 (Kafka 2.2 versions) against a Ferry broker', () => {
  beforeAll(async () => {
    const suite = await buildSaramaSuite();
    broker = await startClientBroker('sarama');
    report = await SuiteReport.run([suite, broker.bootstrap], { timeoutMs: SUITE_TIMEOUT_MS });
  }, BUILD_TIMEOUT_MS + SUITE_TIMEOUT_MS);

  afterAll(async () => {
    if (report !== undefined) console.log(report.summary('sarama'));
    await broker?.stop();
  });

  dataPathTests(() => report, { idempotent: true });

  test('CreateTopics creates a topic with its partition count; again, TOPIC_ALREADY_EXISTS', () => {
    const { again, partitions } = report.data<{ again: number | string | null; partitions: number }>('admin.create_topics');
    expect(again).toBe(ERROR.TOPIC_ALREADY_EXISTS);
    expect(partitions).toBe(3);
  });

  // sarama 1.22.1 sends DescribeConfigs v0, which has is_default where later versions have config_source (it reads 0, unknown).
  test('DescribeConfigs (v0): a config given at creation reads back as not default, others as defaults', () => {
    const entries = configEntries(report.data<{ entries: Entry[] }>('admin.describe_configs').entries);
    expect(entries.get('retention.ms')).toMatchObject({ value: '3600000', isDefault: false, readOnly: false, source: CONFIG_SOURCE.UNKNOWN });
    expect(entries.get('cleanup.policy')).toMatchObject({ value: 'delete', isDefault: true });
  });

  test('AlterConfigs sets a topic config that DescribeConfigs then reads back', () => {
    const { after } = report.data<{ after: Entry[] }>('admin.alter_configs');
    expect(configEntries(after).get('retention.ms')).toMatchObject({ value: '7200000', isDefault: false });
  });

  test('CreatePartitions grows a topic to the total asked for; fewer than it has is INVALID_PARTITIONS', () => {
    const { shrunk, partitions } = report.data<{ shrunk: number | string | null; partitions: number }>('admin.create_partitions');
    expect(shrunk).toBe(ERROR.INVALID_PARTITIONS);
    expect(partitions).toBe(5);
  });

  test('DescribeCluster (Metadata) names the broker', () => {
    const { brokers, controller } = report.data<{ brokers: Record<string, string>; controller: number }>('admin.describe_cluster');
    expect(brokers).toEqual({ 1: broker.bootstrap });
    // sarama 1.22.1's DescribeCluster sends Metadata v0, which carries no controller id: any Kafka broker leaves it -1 too.
    expect(controller).toBe(-1);
  });

  test('ListConsumerGroups lists the group with protocol type consumer', () => {
    expect(report.data<{ groups: Record<string, string> }>('admin.list_consumer_groups').groups).toMatchObject({ 'sr-readers': 'consumer' });
  });

  test('DescribeConsumerGroups: the group is Empty (its members left), protocol type consumer', () => {
    const { groups } = report.data<{ groups: unknown[] }>('admin.describe_consumer_groups');
    expect(groups).toEqual([{ group: 'sr-readers', error: ERROR.NONE, state: 'Empty', protocolType: 'consumer', members: 0 }]);
  });

  test('ListConsumerGroupOffsets reads the committed offset', () => {
    expect(report.data<{ committed: number }>('admin.list_consumer_group_offsets').committed).toBe(15);
  });

  test('DeleteRecords moves the log start offset; a consumer from the oldest offset starts there', () => {
    const { logStartOffset, first } = report.data<{ logStartOffset: number; first: [number, string][] }>('admin.delete_records');
    expect(logStartOffset).toBe(10);
    expect(first.map(([offset]) => offset)).toEqual([10]);
  });

  test('DeleteGroups deletes an empty group, which then is not listed', () => {
    const { errors, groupsAfter } = report.data<{ errors: Record<string, number>; groupsAfter: Record<string, string> }>('admin.delete_consumer_group');
    expect(errors).toEqual({ 'sr-readers': ERROR.NONE });
    expect(Object.keys(groupsAfter)).not.toContain('sr-readers');
  });

  test('the ACL APIs answer SECURITY_DISABLED, as Kafka without an authorizer, and the admin goes on', () => {
    const data = report.data<{ listed: number; matched: number; describeCode: number; createCodes: number[]; deleteCodes: number[] }>('admin.acls');
    expect(data).toEqual({ listed: 0, matched: 0, describeCode: ERROR.SECURITY_DISABLED, createCodes: [ERROR.SECURITY_DISABLED, ERROR.SECURITY_DISABLED], deleteCodes: [ERROR.SECURITY_DISABLED] });
  });

  test('DeleteTopics deletes a topic, which then is not listed', () => {
    const { topics } = report.data<{ topics: string[] }>('admin.delete_topics');
    expect(topics).not.toContain('sr-admin');
    expect(topics).toContain('sr-configured');
  });
});
