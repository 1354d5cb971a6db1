// Local retention with a tier (docs/tier-protocol.md [D1], KIP-405's local.retention.*): local
// disk is a cache of the tiered history; a segment goes only once it is wholly tiered, by
// local.retention.bytes / local.retention.ms (-2: as retention.*), never an untiered one.
import { expect, test } from 'bun:test';
import { ControlStore } from '../../src/control/control-store.ts';
import { Engine } from '../../src/engine/index.ts';
import { buildRecordBatch } from '../../src/format/batch-builder.ts';
import { PartitionLog } from '../../src/log/partition-log.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { tempDir } from '../support/temp-dir.ts';

const T0 = Date.now();

/** Four segments of five 1-record batches each: [0, 5), [5, 10), [10, 15), [15, 20). */
function fourSegments(config: Parameters<typeof PartitionLog.open>[1] = {}): PartitionLog {
  const log = PartitionLog.open(tempDir(), config);
  for (let i = 0; i < 20; i++) {
    if (i > 0 && i % 5 === 0) log.roll();
    log.append(buildRecordBatch([{ value: `v${i}`, timestamp: T0 }], { nowMs: T0 }), 1);
  }
  return log;
}

test('only segments wholly below the tiered end go, by local.retention.bytes', async () => {
  const log = fourSegments({ config: { retentionBytes: -1, localRetentionBytes: 1 } });
  expect(log.enforceRetention(7)).toBe(1); // [0, 5) is tiered whole; [5, 10) is not
  expect(log.logStartOffset).toBe(5);
  expect(log.enforceRetention(15)).toBe(2);
  expect(log.segmentBaseOffsets).toEqual([15]);
  await log.close();
});

test('local.retention of -2 keeps what retention keeps, and -1 keeps every tiered segment', async () => {
  const asRetention = fourSegments({ config: { retentionBytes: -1 } });
  expect(asRetention.enforceRetention(20)).toBe(0); // retention.bytes -1: keep everything
  await asRetention.close();
  const sized = fourSegments({ config: { retentionBytes: 1 } });
  expect(sized.enforceRetention(10)).toBe(2); // retention.bytes 1, as local: down to the tiered end
  await sized.close();
  const keepAll = fourSegments({ config: { retentionBytes: -1, retentionMs: -1, localRetentionBytes: -1, localRetentionMs: -1 } });
  expect(keepAll.enforceRetention(20)).toBe(0);
  await keepAll.close();
});

test('a tiering engine deletes no untiered segment, however far past retention', async () => {
  const store = new MemoryStore();
  const ferry = await Engine.open({
    directory: tempDir(),
    log: { segmentBytes: 2048, retentionBytes: 1 },
    wal: { store, writerId: 'w', config: { uploadIntervalMs: 1 } },
    tier: { store, control: new ControlStore(store, ''), intervalMs: 3_600_000 },
  });
  ferry.createTopic('t', { partitions: 1 });
  for (let i = 0; i < 30; i++) await ferry.produce('t', [{ value: `record ${i} `.padEnd(300, '.') }], { acks: 'all' });
  expect(ferry.enforceRetention()).toBe(0); // nothing tiered yet
  expect(ferry.fetch('t', 0, 0).batches[0]!.baseOffset).toBe(0);
  while ((await ferry.tierer!.tierDue()) > 0);
  const tieredEnd = ferry.tierer!.tieredEndOf(ferry.topics()[0]!.id, 0)!;
  expect(ferry.enforceRetention()).toBeGreaterThan(0);
  const start = ferry.offsetFor('t', 0, -2).offset;
  expect(start).toBeGreaterThan(0);
  expect(start).toBeLessThanOrEqual(tieredEnd);
  await ferry.close();
});

test("local retention that would keep more than the log's retention is refused in one line", () => {
  expect(() => PartitionLog.open(tempDir(), { config: { retentionBytes: 100, localRetentionBytes: 200 } })).toThrow(/localRetentionBytes 200 keeps more than retentionBytes 100/);
  expect(() => PartitionLog.open(tempDir(), { config: { retentionMs: 100, localRetentionMs: -1 } })).toThrow(/localRetentionMs -1 keeps more than retentionMs 100/);
});
