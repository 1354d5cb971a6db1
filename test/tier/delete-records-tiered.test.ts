// DeleteRecords on a tiering engine: the tier still holds the deleted records (until its own
// retention passes them), and serves none of them; reads from the new log start on still come
// from the tier where the local log no longer holds them, and untiered segments stay local.
import { expect, test } from 'bun:test';
import { ControlStore } from '../../src/control/control-store.ts';
import { Engine } from '../../src/engine/index.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { type TierRecord, tierRecordKey } from '../../src/tier/tier-record.ts';
import { tempDir } from '../support/temp-dir.ts';

const EARLIEST = -2;

async function tieredEngine(store: MemoryStore): Promise<Engine> {
  const ferry = await Engine.open({
    directory: tempDir(),
    log: { segmentBytes: 2048, retentionBytes: -1, localRetentionBytes: 1 },
    wal: { store, writerId: 'w', config: { uploadIntervalMs: 1 } },
    tier: { store, control: new ControlStore(store, ''), intervalMs: 3_600_000 },
  });
  ferry.createTopic('t', { partitions: 1 });
  for (let i = 0; i < 30; i++) await ferry.produce('t', [{ value: `record ${i} `.padEnd(300, '.') }], { acks: 'all' });
  return ferry;
}

test('below the new log start the tier serves nothing; from it on, it serves what the local log let go of', async () => {
  const ferry = await tieredEngine(new MemoryStore());
  while ((await ferry.tierer!.tierDue()) > 0);
  expect(ferry.enforceRetention()).toBeGreaterThan(0);
  const localStart = ferry.localLogStartOffset('t', 0);
  expect(localStart).toBeGreaterThan(3);
  expect((await ferry.fetchWithTier('t', 0, 0)).batches[0]!.baseOffset).toBe(0); // the tier holds it all
  expect(ferry.deleteRecords('t', 0, 3)).toBe(3);
  await expect(ferry.fetchWithTier('t', 0, 2)).rejects.toThrow(/before the log start 3/);
  const fromTier = await ferry.fetchWithTier('t', 0, 3);
  expect(fromTier.batches[0]!.baseOffset).toBeLessThanOrEqual(3);
  expect(fromTier.logStartOffset).toBe(3);
  expect((await ferry.offsetForWithTier('t', 0, EARLIEST)).offset).toBe(3);
  expect((await ferry.offsetForWithTier('t', 0, 0)).offset).toBe(3); // a timestamp lookup in the tier starts at the log start
  const topicId = ferry.topics()[0]!.id;
  expect(await ferry.tierLogStartOf(topicId, 0)).toBe(0);
  await ferry.tierer!.tierDue(); // the tier's retention step takes the tier's start up too
  expect(await ferry.tierLogStartOf(topicId, 0)).toBe(3);
  await ferry.close();
});

test('segments not tiered yet stay on local disk past the new log start: the tier still needs them', async () => {
  const store = new MemoryStore();
  const ferry = await tieredEngine(store); // nothing tiered yet
  expect(ferry.deleteRecords('t', 0, 20)).toBe(20);
  expect(ferry.localLogStartOffset('t', 0)).toBe(0);
  expect(() => ferry.fetch('t', 0, 19)).toThrow(/before the log start 20/);
  while ((await ferry.tierer!.tierDue()) > 0); // the tierer still finds every segment from 0
  const topicId = ferry.topics()[0]!.id;
  expect(ferry.tierer!.tieredEndOf(topicId, 0)!).toBeGreaterThan(20);
  await ferry.tierer!.tierDue();
  expect(await ferry.tierLogStartOf(topicId, 0)).toBe(20); // the segments wholly below it left the tier record
  const { segments } = await new ControlStore(store, '').read<TierRecord>(tierRecordKey(topicId, 0)).then((read) => read!.value);
  expect(segments.every((segment) => segment.endOffset > 20)).toBe(true);
  await ferry.close();
});

// Issue 12's simulation, seed 29: a leader that had not read its tier record yet (a takeover, a
// restart) answered DeleteRecords with its local log start, above the offset asked, while the
// tier still served every record from that offset on.
test("DeleteRecords' low watermark is the whole log's start, also before the leader read its tier record", async () => {
  const store = new MemoryStore();
  const directory = tempDir();
  const options = {
    log: { segmentBytes: 2048, retentionBytes: -1, localRetentionBytes: 1 },
    wal: { store, writerId: 'w', config: { uploadIntervalMs: 1 } },
    tier: { store, control: new ControlStore(store, ''), intervalMs: 3_600_000 },
  };
  const ferry = await Engine.open({ directory, ...options });
  ferry.createTopic('t', { partitions: 1 });
  for (let i = 0; i < 30; i++) await ferry.produce('t', [{ value: `record ${i} `.padEnd(300, '.') }], { acks: 'all' });
  while ((await ferry.tierer!.tierDue()) > 0);
  expect(ferry.enforceRetention()).toBeGreaterThan(0);
  await ferry.close();
  const restarted = await Engine.open({ directory, ...options });
  expect(restarted.localLogStartOffset('t', 0)).toBeGreaterThan(3);
  const answered = restarted.deleteRecords('t', 0, 3);
  expect(await restarted.deleteRecordsLowWatermark('t', 0, answered)).toBe(3);
  expect((await restarted.fetchWithTier('t', 0, 3)).logStartOffset).toBe(3);
  await restarted.close();
});

// Fresh seeds of issue 13's simulation, seed 30209: the leader's tier record, cached from a read
// before the segments were copied (nothing tiered yet), was still young when DeleteRecords came
// after the local log let those segments go: the answer was the local start, above what the tier
// served and a reader read right after.
test("DeleteRecords' low watermark reads the tier record afresh: a cached one from before the copy would say nothing is tiered", async () => {
  const store = new MemoryStore();
  const ferry = await Engine.open({
    directory: tempDir(),
    log: { segmentBytes: 2048, retentionBytes: -1, localRetentionBytes: 1 },
    wal: { store, writerId: 'w', config: { uploadIntervalMs: 1 } },
    tier: { store, control: new ControlStore(store, ''), intervalMs: 3_600_000 },
  });
  ferry.createTopic('t', { partitions: 1 });
  for (let i = 0; i < 30; i++) await ferry.produce('t', [{ value: `record ${i} `.padEnd(300, '.') }], { acks: 'all' });
  expect((await ferry.offsetForWithTier('t', 0, EARLIEST)).offset).toBe(0); // reads (and caches) the tier record: nothing copied yet
  while ((await ferry.tierer!.tierDue()) > 0);
  expect(ferry.enforceRetention()).toBeGreaterThan(0);
  expect(ferry.localLogStartOffset('t', 0)).toBeGreaterThan(3);
  const answered = ferry.deleteRecords('t', 0, 3);
  expect(await ferry.deleteRecordsLowWatermark('t', 0, answered)).toBe(3);
  expect((await ferry.fetchWithTier('t', 0, 3)).batches[0]!.baseOffset).toBeLessThanOrEqual(3);
  await ferry.close();
});
