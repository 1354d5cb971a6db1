import { describe, expect, test } from 'bun:test';
import { Engine, type FerryErrorKind, isFerryError, murmur2, partitionForKey } from '../../src/engine/index.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { decode } from '../support/batches.ts';
import { settle, settleUntil } from '../support/settle.ts';
import { tempDir } from '../support/temp-dir.ts';
import { idOf } from '../support/topic-ids.ts';
import { managedBy } from '../support/cluster-policy.ts';

async function expectKind(action: () => unknown, kind: FerryErrorKind): Promise<void> {
  let caught: unknown;
  try {
    await action();
  } catch (error) {
    caught = error;
  }
  expect(isFerryError(caught, kind)).toBe(true);
}

describe('topics', () => {
  test('are created with partitions and survive a reopen', async () => {
    const directory = tempDir();
    const ferry = await Engine.open({ directory });
    ferry.createTopic('orders', { partitions: 3 });
    await expectKind(() => ferry.createTopic('orders'), 'TopicAlreadyExists');
    await ferry.produce('orders', [{ value: 'one' }], { partition: 2 });
    await ferry.close();
    const again = await Engine.open({ directory });
    expect(again.topics()).toEqual([{ name: 'orders', id: ferry.topics()[0]!.id, partitions: 3, config: {} }]);
    expect(again.fetch('orders', 2, 0).highWatermark).toBe(1);
    await again.close();
  });

  test('bad names and counts are refused with InvalidArgument', async () => {
    const ferry = await Engine.open({ directory: tempDir() });
    for (const name of ['', '.', '..', 'a/b', 'x'.repeat(250), 'spaces no']) await expectKind(() => ferry.createTopic(name), 'InvalidArgument');
    await expectKind(() => ferry.createTopic('t', { partitions: 0 }), 'InvalidArgument');
    await expectKind(() => ferry.createTopic('t', { config: { segmentBytes: -5 } }), 'InvalidArgument');
    expect(ferry.topics()).toEqual([]);
    await ferry.close();
  });

  test('unknown topics fail unless auto-creation is on', async () => {
    const strict = await Engine.open({ directory: tempDir() });
    await expectKind(() => strict.produce('nope', [{ value: 'x' }]), 'UnknownTopicOrPartition');
    await expectKind(() => strict.fetch('nope', 0, 0), 'UnknownTopicOrPartition');
    await strict.close();
    const auto = await Engine.open({ directory: tempDir(), autoCreateTopics: true, defaultPartitions: 2 });
    await auto.produce('fresh', [{ value: 'x' }]);
    expect(auto.topics()[0]).toMatchObject({ name: 'fresh', partitions: 2 });
    await auto.close();
  });
});

describe('produce and fetch', () => {
  test('returns each record offset in input order, keyed records by murmur2', async () => {
    const ferry = await Engine.open({ directory: tempDir() });
    ferry.createTopic('t', { partitions: 4 });
    const keys = ['a', 'b', 'c', 'd', 'e', 'a'];
    const produced = await ferry.produce(
      't',
      keys.map((key, i) => ({ key, value: `v${i}` })),
    );
    const encoder = new TextEncoder();
    expect(produced.map((p) => p.partition)).toEqual(keys.map((key) => partitionForKey(encoder.encode(key), 4)));
    // One batch per partition: offsets count up within each partition in input order.
    const next = new Map<number, number>();
    expect(produced.map((p) => p.offset)).toEqual(produced.map((p) => next.set(p.partition, (next.get(p.partition) ?? -1) + 1).get(p.partition)!));
    const first = produced[0]!;
    expect(produced[5]!.partition).toBe(first.partition);
    const { batches } = ferry.fetch('t', first.partition, first.offset);
    const values = batches.flatMap((batch) => [...batch.records()].map((r) => decode(r.value)));
    expect(values).toContain('v0');
    expect(values).toContain('v5');
    await ferry.close();
  });

  test('gzip and zstd batches are stored as sent and read back', async () => {
    const ferry = await Engine.open({ directory: tempDir() });
    ferry.createTopic('t');
    for (const compression of ['gzip', 'zstd'] as const) {
      const [first] = await ferry.produce('t', [{ value: 'x'.repeat(1000) }, { value: compression }], { compression });
      const batch = ferry.fetch('t', 0, first!.offset).batches[0]!;
      expect(batch.compression).toBe(compression);
      expect(batch.sizeInBytes).toBeLessThan(500);
      expect([...batch.records()].map((r) => decode(r.value))).toEqual(['x'.repeat(1000), compression]);
    }
    await ferry.close();
  });

  test('a record too large is refused with RecordTooLarge and nothing is written', async () => {
    const ferry = await Engine.open({ directory: tempDir(), log: { maxBatchBytes: 10_000 } });
    ferry.createTopic('t');
    await expectKind(() => ferry.produce('t', [{ value: new Uint8Array(20_000) }]), 'RecordTooLarge');
    expect(ferry.fetch('t', 0, 0).highWatermark).toBe(0);
    await ferry.close();
  });

  test('acks all waits for the flush; readers never see past the high watermark', async () => {
    const clock = new ManualClock();
    const ferry = await Engine.open({ directory: tempDir(), clock, log: { flush: { kind: 'group', bytes: 1 << 20, ms: 100 } } });
    ferry.createTopic('t');
    let acknowledged = false;
    const pending = ferry.produce('t', [{ value: 'a' }]).then(() => (acknowledged = true));
    const unsafe = await ferry.produce('t', [{ value: 'b' }], { acks: 1 });
    expect(unsafe[0]!.offset).toBe(1);
    await settle(); // the clock stands still: the group commit's 100 ms have not passed
    expect(acknowledged).toBe(false);
    expect(ferry.fetch('t', 0, 0).batches).toEqual([]);
    expect(ferry.fetch('t', 0, 2).batches).toEqual([]); // past the high watermark, at the log end: in range, nothing to read yet (Kafka)
    await expectKind(() => ferry.fetch('t', 0, 3), 'OffsetOutOfRange');
    clock.advance(100);
    await pending;
    expect(ferry.fetch('t', 0, 0).batches.length).toBe(2);
    await ferry.close();
  });

  test('a bad partition is UnknownTopicOrPartition; a closed engine is Closed', async () => {
    const ferry = await Engine.open({ directory: tempDir() });
    ferry.createTopic('t', { partitions: 2 });
    await expectKind(() => ferry.produce('t', [{ value: 'x' }], { partition: 2 }), 'UnknownTopicOrPartition');
    await expectKind(() => ferry.fetch('t', 5, 0), 'UnknownTopicOrPartition');
    await expectKind(() => ferry.produce('t', []), 'InvalidArgument');
    await ferry.close();
    await expectKind(() => ferry.produce('t', [{ value: 'x' }]), 'Closed');
    await expectKind(() => ferry.fetch('t', 0, 0), 'Closed');
  });

  test('a second engine on the same directory is refused with Locked', async () => {
    const directory = tempDir();
    const ferry = await Engine.open({ directory });
    await expectKind(() => Engine.open({ directory }), 'Locked');
    await ferry.close();
  });
});

describe('consume', () => {
  test('yields existing records, then new ones as they arrive, until aborted', async () => {
    const ferry = await Engine.open({ directory: tempDir() });
    ferry.createTopic('t');
    await ferry.produce('t', [{ value: 'r0' }, { value: 'r1' }]);
    const controller = new AbortController();
    const seen: string[] = [];
    const consuming = (async () => {
      for await (const record of ferry.consume('t', { fromOffset: 1, signal: controller.signal })) {
        seen.push(`${record.offset}:${decode(record.value)}`);
        if (seen.length === 3) controller.abort();
      }
    })();
    await settleUntil(() => seen.length === 1, 'the existing record');
    await settle(); // and nothing more, until more is produced
    expect(seen).toEqual(['1:r1']);
    await ferry.produce('t', [{ value: 'r2' }]);
    await ferry.produce('t', [{ value: 'r3' }]);
    await consuming;
    expect(seen).toEqual(['1:r1', '2:r2', '3:r3']);
    await ferry.close();
  });

  test('ends when the engine closes', async () => {
    const ferry = await Engine.open({ directory: tempDir() });
    ferry.createTopic('t');
    const consuming = (async () => {
      const out = [];
      for await (const record of ferry.consume('t')) out.push(record);
      return out;
    })();
    await settle(); // the consumer is waiting for records when the engine closes
    await ferry.close();
    expect(await consuming).toEqual([]);
  });
});

test('murmur2 matches the vectors of Kafka UtilsTest', () => {
  const encoder = new TextEncoder();
  const vectors: [string, number][] = [
    ['21', -973932308],
    ['foobar', -790332482],
    ['a-little-bit-long-string', -985981536],
    ['a-little-bit-longer-string', -1486304829],
    ['lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8', -58897971],
    ['abc', 479470107],
    ['', 275646681],
  ];
  for (const [input, expected] of vectors) expect(murmur2(encoder.encode(input))).toBe(expected);
});

test('managed partitions: only adopted ones are served, leaders take writes, followers do not', async () => {
  const ferry = await Engine.open({ directory: tempDir(), cluster: managedBy() });
  await ferry.adoptPartition('m', idOf('m'), 1, 3, async () => {});
  await ferry.adoptPartition('m', idOf('m'), 2, 3, async () => {}, 'follower');
  expect([0, 1, 2].map((p) => ferry.serves('m', p))).toEqual([false, true, true]);
  expect([0, 1, 2].map((p) => ferry.leads('m', p))).toEqual([false, true, false]);
  expect(ferry.enforceRetention()).toBe(0); // partition 0 is a hole here
  expect((await ferry.produce('m', [{ value: 'x' }], { partition: 1 }))[0]!.offset).toBe(0);
  await expectKind(() => ferry.produce('m', [{ value: 'x' }], { partition: 2 }), 'NotLeader');
  await expectKind(() => ferry.produce('m', [{ value: 'x' }], { partition: 0 }), 'UnknownTopicOrPartition');
  await ferry.releasePartition('m', 1);
  expect(ferry.serves('m', 1)).toBe(false);
  await ferry.deleteTopic('m');
  await ferry.close();
});

test('fetch with maxBytes 0 reads nothing and answers the partition state; out-of-range offsets still fail', async () => {
  const ferry = await Engine.open({ directory: tempDir() });
  ferry.createTopic('t');
  await ferry.produce('t', [{ value: 'a' }, { value: 'b' }]);
  expect(ferry.fetch('t', 0, 0, { maxBytes: 0 })).toEqual({ batches: [], highWatermark: 2, logStartOffset: 0 });
  expect(ferry.fetch('t', 0, 0, { maxBytes: 1 }).batches.length).toBe(1); // any other limit still returns one batch
  await expectKind(() => ferry.fetch('t', 0, 3, { maxBytes: 0 }), 'OffsetOutOfRange');
  await ferry.close();
});
