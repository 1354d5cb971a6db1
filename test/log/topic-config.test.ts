// The topic-config catalog (src/log/topic-config.ts): Kafka's names, its checks and messages, what
// takes effect, and the alteration ops and describe built on it.
import { describe, expect, test } from 'bun:test';
import { isFerryError } from '../../src/errors.ts';
import { parseTopicConfig, parseTopicConfigs, TOPIC_CONFIGS, topicSettingsOf } from '../../src/log/topic-config.ts';
import { applyConfigChanges, replaceAllChanges } from '../../src/log/topic-config-changes.ts';
import { describeTopicConfigs } from '../../src/log/topic-config-describe.ts';

function invalid(name: string, value: string | null): string {
  try {
    parseTopicConfig(name, value);
  } catch (error) {
    if (isFerryError(error, 'InvalidConfig')) return error.message;
    throw error;
  }
  throw new Error(`${name}=${value} was accepted`);
}

describe("each supported config: a good value is normalized, a bad one is InvalidConfig with Kafka's message", () => {
  const cases: [name: string, good: string, normalized: string, bad: string, message: string][] = [
    ['retention.ms', ' 3600000 ', '3600000', 'abc', 'Invalid value abc for configuration retention.ms: Not a number of type LONG'],
    ['retention.ms', '-1', '-1', '-2', 'Invalid value -2 for configuration retention.ms: Value must be at least -1'],
    ['retention.bytes', '+1048576', '1048576', '1.5', 'Invalid value 1.5 for configuration retention.bytes: Not a number of type LONG'],
    ['segment.bytes', '1048576', '1048576', '1048575', 'Invalid value 1048575 for configuration segment.bytes: Value must be at least 1048576'],
    ['segment.bytes', '2147483647', '2147483647', '2147483648', 'Invalid value 2147483648 for configuration segment.bytes: Not a number of type INT'],
    ['segment.ms', '1', '1', '0', 'Invalid value 0 for configuration segment.ms: Value must be at least 1'],
    ['max.message.bytes', '2000', '2000', '60', 'Invalid value 60 for configuration max.message.bytes: Value must be at least 61'],
    [
      'message.timestamp.type',
      'LogAppendTime',
      'LogAppendTime',
      'logappendtime',
      'Invalid value logappendtime for configuration message.timestamp.type: String must be one of: CreateTime, LogAppendTime',
    ],
    ['min.insync.replicas', '2', '2', '0', 'Invalid value 0 for configuration min.insync.replicas: Value must be at least 1'],
    ['remote.storage.enable', 'FALSE', 'false', 'yes', 'Invalid value yes for configuration remote.storage.enable: Expected value to be either true or false'],
    ['local.retention.ms', '-2', '-2', '-3', 'Invalid value -3 for configuration local.retention.ms: Value must be at least -2'],
    ['local.retention.bytes', '100', '100', 'x', 'Invalid value x for configuration local.retention.bytes: Not a number of type LONG'],
    ['cleanup.policy', 'delete', 'delete', 'compact', 'Invalid value compact for configuration cleanup.policy: Ferry does not compact logs yet: cleanup.policy may only be delete'],
    [
      'cleanup.policy',
      'delete , delete',
      'delete',
      'compact,delete',
      'Invalid value compact,delete for configuration cleanup.policy: Ferry does not compact logs yet: cleanup.policy may only be delete',
    ],
    ['min.cleanable.dirty.ratio', '0.25', '0.25', '1.5', 'Invalid value 1.5 for configuration min.cleanable.dirty.ratio: Value must be no more than 1'],
    [
      'compression.type',
      'producer',
      'producer',
      'gzip',
      'Invalid value gzip for configuration compression.type: only producer is supported: Ferry stores batches as the producer sent them (docs/design.md contract 1) and never recompresses',
    ],
    ['compression.type', 'producer', 'producer', 'brotli', 'Invalid value brotli for configuration compression.type: String must be one of: uncompressed, zstd, lz4, snappy, gzip, producer'],
    ['file.delete.delay.ms', '60000', '60000', '0', 'Invalid value 0 for configuration file.delete.delay.ms: only 60000 is supported: Ferry removes a deleted segment at once'],
    [
      'leader.replication.throttled.replicas',
      '0:1, 1:2',
      '0:1,1:2',
      '0-1',
      'Invalid value 0-1 for configuration leader.replication.throttled.replicas: Must be the wildcard (*) or of the form partitionId:brokerId,... (comma separated)',
    ],
  ];
  for (const [name, good, normalized, bad, message] of cases) {
    test(`${name}: ${JSON.stringify(good)} and ${JSON.stringify(bad)}`, () => {
      expect(parseTopicConfig(name, good)).toBe(normalized);
      expect(invalid(name, bad)).toBe(message);
    });
  }
});

test('an unknown name, a null value and a name given twice are refused', () => {
  expect(invalid('retention.msec', '1')).toBe('Unknown topic config name: retention.msec');
  expect(invalid('retention.ms', null)).toStartWith('Invalid value null for configuration retention.ms');
  expect(() =>
    parseTopicConfigs([
      ['retention.ms', '1'],
      ['retention.ms', '2'],
    ]),
  ).toThrow(/more than once/);
});

test('every default passes its own check, and every supported config has a broker synonym or says why not', () => {
  for (const definition of TOPIC_CONFIGS.values()) {
    expect(parseTopicConfig(definition.name, definition.defaultValue)).toBe(definition.defaultValue);
    expect(definition.documentation.length).toBeGreaterThan(10);
  }
  expect(TOPIC_CONFIGS.get('segment.ms')!.brokerSynonym).toBe('log.roll.ms');
  expect(TOPIC_CONFIGS.get('max.message.bytes')!.brokerSynonym).toBe('message.max.bytes');
  expect(TOPIC_CONFIGS.get('retention.ms')!.type).toBe('LONG');
  expect(TOPIC_CONFIGS.get('segment.bytes')!.type).toBe('INT');
});

test('the effective configs become the log settings and min.insync.replicas', () => {
  const settings = topicSettingsOf(
    parseTopicConfigs(
      Object.entries({
        'retention.ms': '1000',
        'retention.bytes': '5000',
        'segment.bytes': '1048576',
        'segment.ms': '60000',
        'max.message.bytes': '2000',
        'message.timestamp.type': 'LogAppendTime',
        'min.insync.replicas': '2',
        'remote.storage.enable': 'false',
        'local.retention.ms': '500',
        'local.retention.bytes': '100',
        'cleanup.policy': 'delete',
        preallocate: 'true',
        'max.compaction.lag.ms': '9223372036854775807',
      }),
    ),
  );
  expect(settings).toEqual({
    log: {
      retentionMs: 1000,
      retentionBytes: 5000,
      segmentBytes: 1048576,
      segmentMs: 60000,
      maxBatchBytes: 2000,
      messageTimestampType: 'LogAppendTime',
      remoteStorageEnable: false,
      localRetentionMs: 500,
      localRetentionBytes: 100,
    },
    minInsyncReplicas: 2,
  });
  // Long.MAX_VALUE means never: it saturates to the largest safe integer.
  expect(topicSettingsOf({ 'retention.ms': '9223372036854775807' }).log.retentionMs).toBe(Number.MAX_SAFE_INTEGER);
});

describe('alteration ops', () => {
  test('set and delete; a bad change changes nothing', () => {
    const current = { 'retention.ms': '1000', 'segment.ms': '5000' };
    expect(
      applyConfigChanges(current, [
        { name: 'retention.ms', op: 'set', value: '2000' },
        { name: 'segment.ms', op: 'delete', value: null },
      ]),
    ).toEqual({ 'retention.ms': '2000' });
    expect(() =>
      applyConfigChanges(current, [
        { name: 'retention.ms', op: 'set', value: '2000' },
        { name: 'segment.ms', op: 'set', value: 'x' },
      ]),
    ).toThrow(/Not a number of type LONG/);
    expect(current).toEqual({ 'retention.ms': '1000', 'segment.ms': '5000' });
    expect(() =>
      applyConfigChanges({}, [
        { name: 'retention.ms', op: 'set', value: '1' },
        { name: 'retention.ms', op: 'delete', value: null },
      ]),
    ).toThrow(/duplicate config keys/);
  });

  test('append and subtract are for lists only, from the default when unset', () => {
    expect(applyConfigChanges({}, [{ name: 'follower.replication.throttled.replicas', op: 'append', value: '0:1' }])).toEqual({ 'follower.replication.throttled.replicas': '0:1' });
    expect(applyConfigChanges({ 'follower.replication.throttled.replicas': '0:1,1:1' }, [{ name: 'follower.replication.throttled.replicas', op: 'subtract', value: '0:1' }])).toEqual({
      'follower.replication.throttled.replicas': '1:1',
    });
    expect(applyConfigChanges({}, [{ name: 'cleanup.policy', op: 'append', value: 'delete' }])).toEqual({ 'cleanup.policy': 'delete' });
    expect(() => applyConfigChanges({}, [{ name: 'cleanup.policy', op: 'append', value: 'compact' }])).toThrow(/does not compact/);
    expect(() => applyConfigChanges({}, [{ name: 'retention.ms', op: 'append', value: '1' }])).toThrow('Config value append is not allowed for config key: retention.ms');
  });

  test('replace-all (AlterConfigs) deletes what it does not name', () => {
    const current = { 'retention.ms': '1000', 'segment.ms': '5000' };
    expect(applyConfigChanges(current, replaceAllChanges(current, [['retention.bytes', '10']]))).toEqual({ 'retention.bytes': '10' });
  });
});

test("describe: the topic value first, then the broker default, then Kafka's, with sources", () => {
  const entries = new Map(describeTopicConfigs({ 'retention.ms': '1000' }, { 'retention.ms': '2000', 'segment.bytes': '1048576' }).map((entry) => [entry.name, entry]));
  expect(entries.get('retention.ms')).toMatchObject({
    value: '1000',
    source: 'TOPIC_CONFIG',
    readOnly: false,
    isDefault: false,
    isSensitive: false,
    type: 'LONG',
    synonyms: [
      { name: 'retention.ms', value: '1000', source: 'TOPIC_CONFIG' },
      { name: 'log.retention.ms', value: '2000', source: 'STATIC_BROKER_CONFIG' },
      { name: 'log.retention.ms', value: '604800000', source: 'DEFAULT_CONFIG' },
    ],
  });
  expect(entries.get('segment.bytes')).toMatchObject({ value: '1048576', source: 'STATIC_BROKER_CONFIG', isDefault: false });
  expect(entries.get('segment.ms')).toMatchObject({ value: '604800000', source: 'DEFAULT_CONFIG', isDefault: true, synonyms: [{ name: 'log.roll.ms', value: '604800000', source: 'DEFAULT_CONFIG' }] });
  expect([...entries.keys()]).toEqual([...entries.keys()].sort());
});
