// Kafka topic configs on the embedded engine: created with the topic (checked first), kept across a
// restart, altered live, taking effect on the open partitions, and described with their sources.
import { expect, test } from 'bun:test';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Engine } from '../../src/engine/index.ts';
import type { RetentionDeletion } from '../../src/engine/index.ts';
import { isFerryError } from '../../src/errors.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { batchOf } from '../support/batches.ts';
import { tempDir } from '../support/temp-dir.ts';

const T0 = 1_700_000_000_000;
const MIB = 1024 * 1024;

function kindOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    return isFerryError(error) ? `${error.kind}: ${error.message}` : String(error);
  }
  return 'no error';
}

test('configs given at create are kept in topics.json and taken again after a restart', async () => {
  const directory = tempDir();
  let ferry = await Engine.open({ directory });
  ferry.createTopic('t', { partitions: 2, configs: { 'retention.ms': ' 3600000', 'max.message.bytes': '5000', preallocate: 'true' } });
  await ferry.close();
  ferry = await Engine.open({ directory });
  expect(ferry.topicConfigs('t')).toEqual({ 'retention.ms': '3600000', 'max.message.bytes': '5000', preallocate: 'true' });
  await expect(ferry.appendBatches('t', 1, batchOf('big', 1, Date.now(), 6000))).rejects.toMatchObject({ kind: 'RecordTooLarge' });
  await ferry.close();
});

test('a bad config creates nothing: no topic, no partition directory', async () => {
  const directory = tempDir();
  const ferry = await Engine.open({ directory });
  expect(kindOf(() => ferry.createTopic('t', { configs: { 'retention.ms': 'abc' } }))).toBe('InvalidConfig: Invalid value abc for configuration retention.ms: Not a number of type LONG');
  expect(kindOf(() => ferry.createTopic('t', { configs: { 'cleanup.policy': 'compact' } }))).toStartWith('InvalidConfig: ');
  expect(kindOf(() => ferry.createTopic('t', { configs: { 'retention.msec': '1' } }))).toBe('InvalidConfig: Unknown topic config name: retention.msec');
  // Each valid, together not: local retention may not keep more than retention.
  expect(kindOf(() => ferry.createTopic('t', { configs: { 'retention.bytes': '1000', 'local.retention.bytes': '5000' } }))).toBe(
    'InvalidConfig: Invalid value 5000 for configuration local.retention.bytes: Value must not be more than retention.bytes property value: 1000',
  );
  expect(ferry.topics()).toEqual([]);
  expect(existsSync(join(directory, 't-0'))).toBe(false);
  await ferry.close();
});

test('alterTopicConfig: validateOnly changes nothing; a change is durable and taken by the open partitions at once', async () => {
  const directory = tempDir();
  let ferry = await Engine.open({ directory });
  ferry.createTopic('t');
  await ferry.appendBatches('t', 0, batchOf('a', 1, Date.now(), 3000));
  expect(ferry.alterTopicConfig('t', [{ name: 'max.message.bytes', op: 'set', value: '1000' }], true)).toEqual({ 'max.message.bytes': '1000' });
  expect(ferry.topicConfigs('t')).toEqual({});
  await ferry.appendBatches('t', 0, batchOf('b', 1, Date.now(), 3000));
  ferry.alterTopicConfig('t', [{ name: 'max.message.bytes', op: 'set', value: '1000' }]);
  await expect(ferry.appendBatches('t', 0, batchOf('c', 1, Date.now(), 3000))).rejects.toMatchObject({ kind: 'RecordTooLarge' });
  expect(kindOf(() => ferry.alterTopicConfig('t', [{ name: 'segment.ms', op: 'set', value: '0' }]))).toBe('InvalidConfig: Invalid value 0 for configuration segment.ms: Value must be at least 1');
  expect(kindOf(() => ferry.alterTopicConfig('nope', [{ name: 'segment.ms', op: 'set', value: '1' }]))).toStartWith('UnknownTopicOrPartition');
  await ferry.close();
  ferry = await Engine.open({ directory });
  expect(ferry.topicConfigs('t')).toEqual({ 'max.message.bytes': '1000' });
  expect(ferry.logEndOffset('t', 0)).toBe(2); // the larger batches taken before the change are still there
  ferry.alterTopicConfig('t', [{ name: 'max.message.bytes', op: 'delete', value: null }]);
  await ferry.appendBatches('t', 0, batchOf('d', 1, Date.now(), 3000));
  await ferry.close();
});

test('segment.bytes and retention.ms altered live: the log rolls by the one and deletes by the other (onRetention tells each pass that deleted)', async () => {
  const clock = new ManualClock(T0);
  const deletions: RetentionDeletion[] = [];
  const ferry = await Engine.open({ directory: tempDir(), clock, log: { flush: { kind: 'none' } }, onRetention: (deletion) => deletions.push(deletion) });
  ferry.createTopic('t');
  const append = async (tag: string) => (await ferry.appendBatches('t', 0, batchOf(tag, 1, clock.nowMs(), MIB / 4))).baseOffset;
  for (let i = 0; i < 6; i++) await append(`a${i}`);
  expect(ferry.enforceRetention()).toBe(0);
  ferry.alterTopicConfig('t', [{ name: 'segment.bytes', op: 'set', value: String(MIB) }]);
  for (let i = 0; i < 6; i++) await append(`b${i}`); // 1.5 MiB more: rolls at 1 MiB
  clock.advance(10 * 60_000);
  await append('new');
  expect(ferry.enforceRetention()).toBe(0); // a week by default
  ferry.alterTopicConfig('t', [{ name: 'retention.ms', op: 'set', value: '60000' }]);
  expect(deletions).toEqual([]);
  expect(ferry.enforceRetention()).toBeGreaterThan(0);
  expect(ferry.localLogStartOffset('t', 0)).toBeGreaterThan(0);
  expect(ferry.fetch('t', 0, ferry.localLogStartOffset('t', 0)).batches.length).toBeGreaterThan(0);
  expect(deletions).toEqual([
    { topic: 't', partition: 0, directory: expect.any(String), fromOffset: 0, toOffset: ferry.localLogStartOffset('t', 0), logEndOffset: ferry.logEndOffset('t', 0), tieredEnd: null },
  ]);
  await ferry.close();
});

test('message.timestamp.type=LogAppendTime: the append answers the time it stamped', async () => {
  const clock = new ManualClock(T0);
  const ferry = await Engine.open({ directory: tempDir(), clock, log: { flush: { kind: 'none' } } });
  ferry.createTopic('t', { configs: { 'message.timestamp.type': 'LogAppendTime' } });
  clock.advance(5);
  const appended = await ferry.appendBatches('t', 0, batchOf('a', 2, T0 - 1000));
  expect(appended.logAppendTimeMs).toBe(T0 + 5);
  const [batch] = ferry.fetch('t', 0, 0).batches;
  expect({ type: batch!.timestampType, max: batch!.maxTimestamp, crc: batch!.isCrcValid() }).toEqual({ type: 'LogAppendTime', max: T0 + 5, crc: true });
  ferry.alterTopicConfig('t', [{ name: 'message.timestamp.type', op: 'set', value: 'CreateTime' }]);
  expect((await ferry.appendBatches('t', 0, batchOf('b', 1, T0 - 1000))).logAppendTimeMs).toBe(-1);
  await ferry.close();
});

test("describeTopicConfigs: set on the topic, set by the broker, or Kafka's default", async () => {
  const ferry = await Engine.open({ directory: tempDir(), log: { retentionMs: 86_400_000 }, minInsyncReplicas: 2 });
  ferry.createTopic('t', { configs: { 'segment.ms': '60000' }, config: { retentionBytes: 12345 } });
  const entries = new Map(ferry.describeTopicConfigs('t').map((entry) => [entry.name, entry]));
  expect(entries.get('segment.ms')).toMatchObject({ value: '60000', source: 'TOPIC_CONFIG', isDefault: false, readOnly: false });
  expect(entries.get('retention.bytes')).toMatchObject({ value: '12345', source: 'TOPIC_CONFIG' }); // the embedded API's override
  expect(entries.get('retention.ms')).toMatchObject({
    value: '86400000',
    source: 'STATIC_BROKER_CONFIG',
    synonyms: [
      { name: 'log.retention.ms', value: '86400000', source: 'STATIC_BROKER_CONFIG' },
      { name: 'log.retention.ms', value: '604800000', source: 'DEFAULT_CONFIG' },
    ],
  });
  expect(entries.get('min.insync.replicas')).toMatchObject({ value: '2', source: 'STATIC_BROKER_CONFIG' });
  expect(entries.get('cleanup.policy')).toMatchObject({ value: 'delete', source: 'DEFAULT_CONFIG', isDefault: true, type: 'LIST' });
  expect(() => ferry.describeTopicConfigs('nope')).toThrow(/unknown topic/);
  await ferry.close();
});
