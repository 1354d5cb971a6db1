import { buildRecordBatch } from '../../src/format/batch-builder.ts';
import { describe, expect, test } from 'bun:test';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isFerryError } from '../../src/errors.ts';
import type { RecordBatch } from '../../src/format/record-batch.ts';
import { PartitionLog } from '../../src/log/partition-log.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { batchOf, concat, decode } from '../support/batches.ts';
import { PowerLossRecorder, restoreSyncedState } from '../support/power-loss.ts';
import { settle } from '../support/settle.ts';
import { tempDir } from '../support/temp-dir.ts';
import { diskWithSync, systemDisk } from '../../src/util/disk.ts';

const T0 = 1_700_000_000_000;

/** The log end of `t-0` on the disk a power cut would leave now (its fsyncs recorded in `journal`). */
async function logEndAfterPowerCut(journal: string): Promise<number> {
  const image = tempDir('ferry-cut-');
  restoreSyncedState(journal, image);
  const log = PartitionLog.open(join(image, 't-0'));
  const end = log.logEndOffset;
  await log.close();
  return end;
}

function values(batches: readonly RecordBatch[]): (string | null)[] {
  return batches.flatMap((batch) => [...batch.records()].map((record) => decode(record.value)));
}

function expectKind(action: () => unknown, kind: Parameters<typeof isFerryError>[1]): void {
  let caught: unknown;
  try {
    action();
  } catch (error) {
    caught = error;
  }
  expect(isFerryError(caught, kind)).toBe(true);
}

describe('append and read', () => {
  test('assigns offsets from the log end and reads whole batches back', async () => {
    const log = PartitionLog.open(tempDir());
    expect(log.append(batchOf('a', 3), 0)).toMatchObject({ baseOffset: 0, lastOffset: 2 });
    expect(log.append(batchOf('b', 2), 0)).toMatchObject({ baseOffset: 3, lastOffset: 4 });
    expect(log.logEndOffset).toBe(5);
    const read = log.read(4, 1 << 20);
    expect(read.batches.map((b) => b.baseOffset)).toEqual([3]);
    expect(values(read.batches)).toEqual(['b-0', 'b-1']);
    expect(values(log.read(0, 1 << 20).batches)).toEqual(['a-0', 'a-1', 'a-2', 'b-0', 'b-1']);
    await log.close();
  });

  test('several batches in one append get consecutive offsets', async () => {
    const log = PartitionLog.open(tempDir());
    const result = log.append(concat(batchOf('a', 2), batchOf('b', 3)), 0);
    expect(result.batches.map((b) => [b.baseOffset, b.lastOffset])).toEqual([
      [0, 1],
      [2, 4],
    ]);
    expect(result.batches.every((b) => b.isCrcValid() && b.partitionLeaderEpoch === 0)).toBe(true);
    await log.close();
  });

  test('returns at least one batch even when it is larger than maxBytes, and stays within maxBytes after it', async () => {
    const log = PartitionLog.open(tempDir());
    const sizes = [0, 1, 2].map((i) => log.append(batchOf(`b${i}`, 1, T0, 1000), 0).sizeBytes);
    expect(log.read(0, 10).batches.length).toBe(1);
    expect(log.read(0, sizes[0]! + sizes[1]! - 1).batches.length).toBe(1);
    expect(log.read(0, sizes[0]! + sizes[1]!).batches.length).toBe(2);
    await log.close();
  });

  test('the batches of one read are views of one buffer (zero copy)', async () => {
    const log = PartitionLog.open(tempDir());
    for (let i = 0; i < 5; i++) log.append(batchOf(`b${i}`), 0);
    const { batches } = log.read(0, 1 << 20);
    expect(batches.length).toBe(5);
    expect(new Set(batches.map((b) => b.bytes.buffer)).size).toBe(1);
    await log.close();
  });

  test('offsets outside the log are OffsetOutOfRange; the log end reads empty', async () => {
    const log = PartitionLog.open(tempDir());
    log.append(batchOf('a', 2), 0);
    expect(log.read(2, 100).batches).toEqual([]);
    expectKind(() => log.read(3, 100), 'OffsetOutOfRange');
    expectKind(() => log.read(-1, 100), 'OffsetOutOfRange');
    await log.close();
  });

  test('a closed log refuses everything with Closed', async () => {
    const log = PartitionLog.open(tempDir());
    await log.close();
    expectKind(() => log.append(batchOf('a'), 0), 'Closed');
    expectKind(() => log.read(0, 100), 'Closed');
  });

  test('an older leader epoch is refused; a newer one is recorded', async () => {
    const dir = tempDir();
    const log = PartitionLog.open(dir);
    log.append(batchOf('a'), 3);
    expectKind(() => log.append(batchOf('b'), 2), 'InvalidArgument');
    log.append(batchOf('c'), 5);
    expect(log.read(1, 100).batches[0]!.partitionLeaderEpoch).toBe(5);
    expect(log.latestEpoch).toBe(5);
    expect(readFileSync(join(dir, 'leader-epoch-checkpoint'), 'utf8')).toBe('0\n2\n3 0\n5 1\n');
    await log.close();
  });
});

describe('bad input leaves the log unchanged', () => {
  async function rejects(mutate: (bytes: Uint8Array) => Uint8Array, kind: 'CorruptRecord' | 'RecordTooLarge' | 'InvalidArgument') {
    const dir = tempDir();
    const log = PartitionLog.open(dir, { config: { maxBatchBytes: 4096 } });
    log.append(batchOf('good'), 0);
    const before = readFileSync(join(dir, '00000000000000000000.log'));
    // The bad batch follows a good one in the same request: nothing of the request may land.
    expectKind(() => log.append(concat(batchOf('fine'), mutate(batchOf('bad', 3))), 0), kind);
    expect(log.logEndOffset).toBe(1);
    expect(readFileSync(join(dir, '00000000000000000000.log'))).toEqual(before);
    expect(values(log.read(0, 1 << 20).batches)).toEqual(['good-0']);
    await log.close();
  }

  test('bad CRC', () => rejects((b) => ((b[b.length - 1]! ^= 1), b), 'CorruptRecord'));
  test('wrong magic', () => rejects((b) => ((b[16] = 1), b), 'CorruptRecord'));
  test('truncated batch', () => rejects((b) => b.subarray(0, b.length - 1), 'CorruptRecord'));
  test('oversize batch', () => rejects(() => batchOf('big', 1, T0, 5000), 'RecordTooLarge'));
  test('empty request', async () => {
    const log = PartitionLog.open(tempDir());
    expectKind(() => log.append(new Uint8Array(0), 0), 'InvalidArgument');
    expect(log.logEndOffset).toBe(0);
    await log.close();
  });
});

describe('segments', () => {
  test('rolls by segment.bytes and reads across segments', async () => {
    const dir = tempDir();
    const log = PartitionLog.open(dir, { config: { segmentBytes: 2048 } });
    for (let i = 0; i < 40; i++) log.append(batchOf(`b${i}`, 2, T0, 100), 0);
    expect(log.segmentBaseOffsets.length).toBeGreaterThan(3);
    const files = readdirSync(dir).filter((name) => name.endsWith('.log'));
    expect(files.length).toBe(log.segmentBaseOffsets.length);
    const all: string[] = [];
    for (let offset = 0; offset < log.logEndOffset; ) {
      const { batches } = log.read(offset, 3000);
      all.push(...(values(batches) as string[]));
      offset = batches.at(-1)!.nextOffset;
    }
    expect(all.length).toBe(80);
    expect(all[79]).toStartWith('b39-1');
    await log.close();
  });

  test('a batch larger than segment.bytes gets a segment of its own', async () => {
    const log = PartitionLog.open(tempDir(), { config: { segmentBytes: 1024 } });
    log.append(batchOf('small'), 0);
    log.append(batchOf('big', 1, T0, 3000), 0);
    log.append(batchOf('after'), 0);
    expect(log.segmentBaseOffsets).toEqual([0, 1, 2]);
    await log.close();
  });

  test('rolls by segment.ms, counted from the first batch timestamp', async () => {
    const log = PartitionLog.open(tempDir(), { config: { segmentMs: 1000 } });
    log.append(batchOf('a', 1, T0), 0);
    log.append(batchOf('b', 1, T0 + 999), 0);
    expect(log.segmentBaseOffsets).toEqual([0]);
    log.append(batchOf('c', 1, T0 + 1000), 0);
    expect(log.segmentBaseOffsets).toEqual([0, 2]);
    await log.close();
  });

  test('retention by bytes deletes the oldest sealed segments, never the active one', async () => {
    const log = PartitionLog.open(tempDir(), { config: { segmentBytes: 1024, retentionBytes: 2048 } });
    for (let i = 0; i < 30; i++) log.append(batchOf(`b${i}`, 1, T0, 200), 0);
    const before = log.segmentBaseOffsets;
    const deleted = log.enforceRetention();
    expect(deleted).toBeGreaterThan(0);
    expect(log.segmentBaseOffsets).toEqual(before.slice(deleted));
    expect(log.sizeBytes).toBeLessThanOrEqual(2048 + 1024);
    expect(log.logStartOffset).toBe(log.segmentBaseOffsets[0]!);
    expect(() => log.read(0, 100)).toThrow(/outside the log/);
    expect(values(log.read(log.logStartOffset, 100).batches)[0]).toStartWith(`b${log.logStartOffset}-0`);
    await log.close();
  });

  test('retention by time uses the clock and each segment newest timestamp', async () => {
    const clock = new ManualClock(T0);
    const log = PartitionLog.open(tempDir(), { clock, config: { segmentBytes: 1024, retentionMs: 60_000 } });
    for (let i = 0; i < 10; i++) log.append(batchOf(`old${i}`, 1, T0, 300), 0);
    log.roll();
    log.append(batchOf('new', 1, T0 + 120_000), 0);
    clock.advance(30_000);
    expect(log.enforceRetention()).toBe(0);
    clock.advance(31_000);
    expect(log.enforceRetention()).toBeGreaterThan(0);
    expect(log.logStartOffset).toBe(10);
    await log.close();
  });

  test('offsetForTimestamp finds the first batch at or after a time', async () => {
    const log = PartitionLog.open(tempDir(), { config: { segmentBytes: 1024, indexIntervalBytes: 128 } });
    for (let i = 0; i < 50; i++) log.append(batchOf(`b${i}`, 1, T0 + i * 10, 50), 0);
    expect(log.offsetForTimestamp(T0)).toEqual({ offset: 0, timestamp: T0 });
    expect(log.offsetForTimestamp(T0 + 255)).toEqual({ offset: 26, timestamp: T0 + 260 });
    expect(log.offsetForTimestamp(T0 + 490)).toEqual({ offset: 49, timestamp: T0 + 490 });
    expect(log.offsetForTimestamp(T0 + 491)).toBeNull();
    await log.close();
  });

  test('offsetForTimestamp finds the first record at or after a time inside a batch, as Kafka does', async () => {
    const log = PartitionLog.open(tempDir());
    log.append(
      buildRecordBatch(
        [0, 1, 2].map((i) => ({ key: null, value: `r${i}`, timestamp: T0 + i })),
        { nowMs: T0 },
      ),
      0,
    );
    expect(log.offsetForTimestamp(T0 + 1)).toEqual({ offset: 1, timestamp: T0 + 1 });
    expect(log.offsetForTimestamp(T0 + 2)).toEqual({ offset: 2, timestamp: T0 + 2 });
    expect(log.offsetForTimestamp(T0 + 3)).toBeNull();
    await log.close();
  });
});

describe('replica appends', () => {
  async function leaderBatches(count: number): Promise<Uint8Array<ArrayBuffer>[]> {
    const leader = PartitionLog.open(tempDir());
    const out = [];
    for (let i = 0; i < count; i++) out.push(Uint8Array.from(leader.append(batchOf(`r${i}`, 2), 7).batches[0]!.bytes));
    await leader.close();
    return out;
  }

  test('keeps the leader offsets and epochs, byte for byte', async () => {
    const batches = await leaderBatches(3);
    const follower = PartitionLog.open(tempDir());
    follower.appendReplica(concat(batches[0]!, batches[1]!));
    follower.appendReplica(batches[2]!);
    const read = follower.read(0, 1 << 20).batches;
    expect(read.map((b): Uint8Array => Uint8Array.from(b.bytes))).toEqual(batches);
    expect(follower.latestEpoch).toBe(7);
    await follower.close();
  });

  test('refuses a gap or an overlap and stays unchanged', async () => {
    const batches = await leaderBatches(3);
    const follower = PartitionLog.open(tempDir());
    follower.appendReplica(batches[0]!);
    expectKind(() => follower.appendReplica(batches[2]!), 'InvalidOffsets');
    expectKind(() => follower.appendReplica(batches[0]!), 'InvalidOffsets');
    expectKind(() => follower.appendReplica(concat(batches[1]!, batches[1]!)), 'InvalidOffsets');
    expect(follower.logEndOffset).toBe(2);
    follower.appendReplica(batches[1]!);
    expect(follower.logEndOffset).toBe(4);
    await follower.close();
  });

  test('truncateTo removes the tail, across segments, and appends continue from there', async () => {
    const dir = tempDir();
    const log = PartitionLog.open(dir, { config: { segmentBytes: 1024 } });
    for (let i = 0; i < 20; i++) log.append(batchOf(`b${i}`, 1, T0, 200), i < 10 ? 0 : 1);
    log.truncateTo(5);
    expect(log.logEndOffset).toBe(5);
    expect(log.latestEpoch).toBe(0);
    expect(log.append(batchOf('new'), 2).baseOffset).toBe(5);
    expect(
      values(log.read(0, 1 << 20).batches)
        .slice(-2)
        .map((v) => v!.slice(0, 5)),
    ).toEqual(['b4-0x', 'new-0']);
    await log.close();
    const reopened = PartitionLog.open(dir, { config: { segmentBytes: 1024 } });
    expect(reopened.logEndOffset).toBe(6);
    await reopened.close();
  });
});

describe('flush policies', () => {
  test('per-append: flushed before append returns', async () => {
    const log = PartitionLog.open(tempDir(), { config: { flush: { kind: 'per-append' } } });
    log.append(batchOf('a', 3), 0);
    expect(log.flushedOffset).toBe(3);
    await log.waitForFlush(2);
    await log.close();
  });

  test('group by time: acknowledged only after the timer fires and the sync completes', async () => {
    const clock = new ManualClock(T0);
    const log = PartitionLog.open(tempDir(), { clock, config: { flush: { kind: 'group', bytes: 1 << 20, ms: 50 } } });
    log.append(batchOf('a'), 0);
    log.append(batchOf('b'), 0);
    let acknowledged = false;
    const waiting = log.waitForFlush(1).then(() => (acknowledged = true));
    await Bun.sleep(20);
    expect(acknowledged).toBe(false);
    expect(log.flushedOffset).toBe(0);
    clock.advance(50);
    await waiting;
    expect(log.flushedOffset).toBe(2);
    await log.close();
  });

  test('group by bytes: a sync starts once enough bytes are pending', async () => {
    const clock = new ManualClock(T0);
    const log = PartitionLog.open(tempDir(), { clock, config: { flush: { kind: 'group', bytes: 2000, ms: 60_000 } } });
    log.append(batchOf('a', 1, T0, 1500), 0);
    await settle();
    expect(log.flushedOffset).toBe(0);
    log.append(batchOf('b', 1, T0, 1500), 0);
    await log.waitForFlush(1);
    expect(log.flushedOffset).toBe(2);
    await log.close();
  });

  test('none: waitForFlush does not wait; close still syncs', async () => {
    // The fsyncs are recorded, so "has it synced?" is asked of a simulated power cut.
    const root = tempDir();
    const journal = tempDir('ferry-journal-');
    const log = PartitionLog.open(join(root, 't-0'), { clock: new ManualClock(T0), disk: diskWithSync(systemDisk, new PowerLossRecorder(root, journal)), config: { flush: { kind: 'none' } } });
    log.append(batchOf('a'), 0);
    await log.waitForFlush(0); // returns on a clock that never moves, with nothing synced:
    expect(log.flushedOffset).toBe(0);
    expect(await logEndAfterPowerCut(journal)).toBe(0); // a power cut now loses the batch
    await log.close();
    expect(await logEndAfterPowerCut(journal)).toBe(1); // close synced it
  });
});

test('concurrent producers: every batch lands once, offsets contiguous, each producer in order', async () => {
  const log = PartitionLog.open(tempDir(), { config: { segmentBytes: 8192, flush: { kind: 'group', bytes: 4096, ms: 1 } } });
  const producers = 16;
  const batchesEach = 40;
  const acknowledged: { producer: number; sequence: number; baseOffset: number }[] = [];
  await Promise.all(
    Array.from({ length: producers }, async (_, producer) => {
      for (let sequence = 0; sequence < batchesEach; sequence++) {
        const { baseOffset, lastOffset } = log.append(batchOf(`p${producer}s${sequence}`, 2), 0);
        await log.waitForFlush(lastOffset);
        acknowledged.push({ producer, sequence, baseOffset });
      }
    }),
  );
  expect(log.logEndOffset).toBe(producers * batchesEach * 2);
  const offsets = acknowledged.map((a) => a.baseOffset).sort((a, b) => a - b);
  expect(offsets).toEqual(Array.from({ length: producers * batchesEach }, (_, i) => i * 2));
  const seen = new Map<number, number>();
  for (let offset = 0; offset < log.logEndOffset; ) {
    const { batches } = log.read(offset, 1 << 16);
    for (const value of values(batches)) {
      const [, producer, sequence, index] = /^p(\d+)s(\d+)-(\d)$/.exec(value!)!.map(Number);
      if (index === 0) {
        expect(sequence).toBe((seen.get(producer!) ?? -1) + 1);
        seen.set(producer!, sequence!);
      }
    }
    offset = batches.at(-1)!.nextOffset;
  }
  expect([...seen.values()]).toEqual(Array(producers).fill(batchesEach - 1));
  await log.close();
});
